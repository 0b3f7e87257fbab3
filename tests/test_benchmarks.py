"""The benchmark suite (benchmarks/): every case runs at tiny sizes, and its minitorch and hand-written numpy
versions agree on the loss and the gradients, so the table compares the same computation on both sides."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch as torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root holds benchmarks/
from benchmarks import cases, checkpoint_memory, overhead_parts, run  # noqa: E402


def as_numpy(value) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        if value.layout == torch.sparse_coo:
            value = value.coalesce()._values()
        return value.detach().cpu().numpy()
    return np.asarray(value)


@pytest.mark.parametrize("name", list(cases.CASES))
def test_minitorch_and_numpy_versions_agree(device, name):
    case = cases.CASES[name](device, small=True)
    loss, grads = case.minitorch()
    expected_loss, expected_grads = case.numpy()
    np.testing.assert_allclose(as_numpy(loss), expected_loss, rtol=2e-5, atol=1e-6)
    assert len(grads) == len(expected_grads)
    for got, expected in zip(grads, expected_grads):
        assert got is not None
        np.testing.assert_allclose(as_numpy(got), expected, rtol=1e-4, atol=1e-6)


def test_transformer_step_updates_the_same_weights(device):
    """After one step each, the example's model (AdamW in minitorch) and the numpy step hold the same weights."""
    case = cases.CASES["transformer_step"](device, small=True)
    case.minitorch()
    case.numpy()
    for name, parameter in case.model.named_parameters():
        # The key bias's gradient is 0 in exact arithmetic (softmax ignores a constant added to a row), so both
        # sides hold rounding noise there, which Adam normalizes into a step of up to lr either way.
        atol = 2 * case.lr if name.endswith("attn.qkv.bias") else 1e-6
        np.testing.assert_allclose(as_numpy(parameter), case.params[name], rtol=1e-4, atol=atol, err_msg=name)


def test_transformer_step_with_the_exact_gelu(device):
    pytest.importorskip("scipy")  # the numpy side's erf
    case = cases.CASES["transformer_step"](device, small=True, gelu="none")
    (loss, grads), (expected_loss, expected_grads) = case.minitorch(), case.numpy()
    np.testing.assert_allclose(as_numpy(loss), expected_loss, rtol=2e-5)
    for got, expected in zip(grads, expected_grads):
        np.testing.assert_allclose(as_numpy(got), expected, rtol=1e-4, atol=1e-6)


def test_heavy_cases_are_left_out_of_the_default_run():
    assert "sparse_mm" in cases.CASES and "sparse_mm" not in run.default_cases()
    assert {"transformer_step", "mlp_step", "overhead"} <= set(run.default_cases())


def test_the_table_and_json_include_peak_memory(tmp_path, capsys, monkeypatch):
    """run.main end to end on two cases (tiny sizes): the timing table, the peak-memory table, the JSON."""
    for name in ("elementwise_big", "views_inplace"):
        full_size = cases.CASES[name]
        monkeypatch.setitem(cases.CASES, name, type(name, (full_size,), {"__init__": _small_init(full_size)}))
    out = tmp_path / "bench.json"
    threads = torch.get_num_threads()
    try:
        run.main(["--case", "elementwise_big", "views_inplace", "--repeats", "1", "--json", str(out)])
    finally:
        torch.set_num_threads(threads)
    printed = capsys.readouterr().out
    assert "BLAS threads 1" in printed and "peak memory" in printed
    rows = {row["case"]: row for row in json.loads(out.read_text())["results"]}
    assert rows["elementwise_big"]["peak_mib_minitorch"] > 0 and rows["elementwise_big"]["peak_mib_numpy"] > 0
    assert "peak_mib_numpy" not in rows["views_inplace"] and rows["views_inplace"]["ratio"] > 0
    big = rows["elementwise_big"]  # the compiled column: its time, ratio to numpy, compile time and peak memory
    assert big["compiled"] > 0 and big["compiled_ratio"] > 0 and big["compile_seconds"] > 0
    assert big["peak_mib_compiled"] >= 0 and "compiled" in printed and "compile s" in printed


def test_profile_prints_where_the_time_goes(capsys):
    threads = torch.get_num_threads()
    try:
        run.main(["--case", "overhead", "--repeats", "2", "--profile", "5"])
    finally:
        torch.set_num_threads(threads)
    printed = capsys.readouterr().out
    assert "== overhead: 2 runs" in printed and "run_backward" in printed and "ratio" not in printed  # no timing table


def test_overhead_parts_splits_the_step_into_forward_recording_and_backward(capsys):
    measured = overhead_parts.parts(torch, rounds=1)
    assert list(measured) == ["forward (grad off)", "recording", "backward", "total"]
    assert measured["forward (grad off)"] > 0 and measured["total"] > measured["forward (grad off)"]
    overhead_parts.main(["--rounds", "1"])
    printed = capsys.readouterr().out
    assert "recording" in printed and "minitorch" in printed


def test_checkpoint_memory_script(tmp_path, capsys):
    """benchmarks/checkpoint_memory.py at a small size: every variant's gradients equal the plain run's (it checks
    them), and checkpointing in segments lowers the traced peak."""
    out = tmp_path / "ckpt.json"
    threads = torch.get_num_threads()
    try:
        checkpoint_memory.main(["--layers", "9", "--width", "32", "--batch", "1024", "--repeats", "1",
                                "--json", str(out)])
    finally:
        torch.set_num_threads(threads)
    assert "peak MiB" in capsys.readouterr().out
    rows = {row["variant"]: row for row in json.loads(out.read_text())}
    assert set(rows) == {"plain", "sequential, 3 segments", "sequential, 3 segments, reentrant", "every layer"}
    assert rows["sequential, 3 segments"]["peak_mib"] < 0.8 * rows["plain"]["peak_mib"]


def _small_init(case_class):
    def __init__(self, device):
        case_class.__init__(self, device, small=True)

    return __init__


def test_random_samplers_benchmark_runs_and_compares_the_numbers():
    """benchmarks/random_samplers.py at a tiny size: every case runs, and where PyTorch is installed both
    libraries drew the same numbers."""
    from benchmarks import random_samplers

    rows = random_samplers.run(200, 1)
    assert [row["case"] for row in rows] == list(random_samplers.cases(torch, 10))
    assert all(row["minitorch_s"] > 0 and row.get("same", True) for row in rows)
