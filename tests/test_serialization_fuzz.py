"""Fuzzing minitorch.load: every mutation of a valid checkpoint either loads or raises SerializationError,
in bounded memory and time.

The mutations are drawn from a fixed seed (one ``random.Random(i)`` per case, so a failure names the case
that reproduces it). ``MINITORCH_FUZZ_LOADS`` sets the number of cases (a few hundred by default, a few
seconds); see docs/serialization.md for a long run.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
import time
import tracemalloc
import warnings
import zipfile

import minitorch as torch
from minitorch import serialization
from minitorch.serialization import SerializationError

CASES = int(os.environ.get("MINITORCH_FUZZ_LOADS", "300"))
MEMORY_FACTOR, MEMORY_SLACK = 10, 2**20  # peak traced memory of one load < 10 x file size + 1 MiB
SECONDS = 5.0  # per load, generous for a loaded CI machine (a valid load takes milliseconds)

WRONG_TYPES = [None, True, False, "x", "float32", [], {}, [1, 2], {"a": 1}, 1.5, 0]
HUGE = [2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64, 10**30, 10**300]
NEGATIVE = [-1, -2, -(2**31), -(2**63), -(10**30)]
COMPRESSIONS = [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]


def checkpoint() -> bytes:
    """A nested dict of tensors: views sharing storage, several dtypes, a Parameter, containers and scalars."""
    base = torch.arange(12.0).reshape(3, 4)
    obj = {
        "model": {"w": base, "wt": base.t(), "row": base[1], "col": base[:, 2], "e": torch.ones(1).expand(5),
                  "bias": torch.nn.Parameter(torch.zeros(4))},
        "ints": torch.tensor([[1, -2], [3, 4]], dtype=torch.int64),
        "mask": torch.tensor([True, False, True]),
        "half": torch.tensor([0.5, -1.0], dtype=torch.float16),
        "bytes": torch.arange(5, dtype=torch.uint8),
        "empty": torch.zeros(0, 3, dtype=torch.int32),
        "scalar": torch.tensor(2.5, dtype=torch.float64),
        0: {"step": 3, "betas": (0.9, 0.999), "lr": float("inf")},
        "meta": [torch.Size([2, 3]), torch.float16, torch.device("cpu"), None, "text"],
    }
    buffer = io.BytesIO()
    serialization._save_minitorch_format(obj, buffer)  # this file fuzzes minitorch's earlier (JSON) format
    return buffer.getvalue()


def members(data: bytes) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return [(info.filename, archive.read(info)) for info in archive.infolist()]


def rezip(entries, compress: dict | None = None) -> bytes:
    """An archive of ``entries`` (name, bytes), stored unless ``compress`` names a method for a member."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # "Duplicate name": intended
        for name, data in entries:
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=(compress or {}).get(name, zipfile.ZIP_STORED))
    return buffer.getvalue()


def _slots(node, out):
    """Every (container, key) in a JSON tree, so that one can be replaced or deleted."""
    if isinstance(node, dict):
        for key, value in node.items():
            out.append((node, key))
            _slots(value, out)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.append((node, index))
            _slots(value, out)
    return out


def _pick(rng: random.Random, pool: list):
    return copy.deepcopy(rng.choice(pool))  # a fresh [] or {} each time: no shared (or cyclic) JSON


def edit_manifest(rng: random.Random, entries) -> list:
    manifest = json.loads(entries[0][1])
    for _ in range(rng.randint(1, 3)):
        container, key = rng.choice(_slots(manifest, []))
        action = rng.random()
        if action < 0.15 and isinstance(container, dict):
            del container[key]
        elif action < 0.25 and isinstance(container, dict):
            container[rng.choice(["extra", "$tensor", "dtype", "parameter"])] = _pick(rng, WRONG_TYPES + [1])
        elif action < 0.3 and isinstance(container, list):
            container.append(_pick(rng, WRONG_TYPES))
        else:
            container[key] = _pick(rng, rng.choice([WRONG_TYPES, HUGE, NEGATIVE]))
    text = json.dumps(manifest)
    return [(entries[0][0], text.encode())] + entries[1:]


HEADERS = {b"PK\x03\x04": 30, b"PK\x01\x02": 46, b"PK\x05\x06": 22, b"PK\x06\x06": 56, b"PK\x06\x07": 20}


def corrupt_header(rng: random.Random, data: bytes) -> bytes:
    """Overwrite a field of a zip record (local header, central directory entry, end records): offsets,
    sizes, name and extra lengths, methods, flags, with small, boundary or huge values."""
    starts = [(i, length) for signature, length in HEADERS.items()
              for i in range(len(data)) if data.startswith(signature, i)]
    start, length = rng.choice(starts)
    width = rng.choice([1, 2, 4, 8])
    at = start + rng.randrange(4, max(5, length - width + 1))
    value = rng.choice([0, 1, 2, 0xFF, 0xFFFF, 0xFFFFFFFF, 2**(8 * width) - 1, rng.randrange(2**(8 * width))])
    value &= 2**(8 * width) - 1
    return data[:at] + value.to_bytes(width, "little") + data[at + width:]


def mutate(rng: random.Random, data: bytes, json_edits: bool = True) -> bytes:
    kind = rng.randrange(8)
    if kind in (2, 3) and not json_edits:  # a PyTorch-format file has no manifest: flip bytes instead
        kind = 0
    if kind == 7:
        return corrupt_header(rng, data)
    entries = members(data)
    if kind == 0:  # flip a few bytes anywhere
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] ^= rng.randint(1, 255)
        return bytes(damaged)
    if kind == 1:  # cut short
        return data[: rng.randrange(len(data))]
    if kind in (2, 3):  # edit the manifest's JSON
        return rezip(edit_manifest(rng, entries))
    if kind == 4:  # a duplicate member (the manifest or a storage), first or last
        twin = rng.choice(entries)
        entries.insert(rng.choice([0, len(entries)]), (twin[0], rng.choice([twin[1], b"{}", b""])))
        return rezip(entries)
    if kind == 5:  # a compressed member
        name = rng.choice(entries)[0]
        return rezip(entries, {name: rng.choice(COMPRESSIONS)})
    # kind 6: drop, add or resize a member
    action = rng.randrange(3)
    if action == 0:
        entries.pop(rng.randrange(len(entries)))
    elif action == 1:
        entries.append((rng.choice(["storages/99", "storages/-1", "data.pkl", "x"]), b"\0" * rng.randrange(16)))
    else:
        index = rng.randrange(1, len(entries))
        name, payload = entries[index]
        entries[index] = (name, payload[: rng.randrange(len(payload) + 1)] + b"\0" * rng.randrange(3))
    return rezip(entries)


def load_within_bounds(data: bytes, case: int, path=None) -> None:
    """Load from a file object, or from ``path`` (a real file: zipfile seeks differ) when given."""
    if path is not None:
        path.write_bytes(data)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        torch.load(path if path is not None else io.BytesIO(data))
    except SerializationError:
        pass
    except Exception as exc:  # noqa: BLE001 - the point: nothing but SerializationError may escape
        raise AssertionError(f"case {case}: {type(exc).__name__}: {exc}") from exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    elapsed = time.perf_counter() - started
    assert peak < MEMORY_FACTOR * len(data) + MEMORY_SLACK, f"case {case}: peak {peak} bytes for {len(data)}"
    assert elapsed < SECONDS, f"case {case}: {elapsed:.1f} s"


def test_mutated_checkpoints_load_or_raise_serialization_error(tmp_path):
    data = checkpoint()
    torch.load(io.BytesIO(data))  # the unmutated file is valid
    for case in range(CASES):
        load_within_bounds(mutate(random.Random(case), data), case, tmp_path / "ckpt.pt" if case % 2 else None)


def test_decompression_bomb_is_refused_before_inflating():
    entries = members(checkpoint())
    entries[1] = (entries[1][0], b"\0" * (64 * 2**20))  # 64 MiB of zeros deflate to about 64 KiB
    bomb = rezip(entries, {entries[1][0]: zipfile.ZIP_DEFLATED})
    assert len(bomb) < 2**20
    load_within_bounds(bomb, -1)


def test_deeply_nested_containers_load_in_linear_time():
    """Each level once formatted its whole subtree for an error message it did not raise: 95 tuples around
    a list of 200,000 ints (1.5 MB) took 12 s; now about 0.2 s."""
    node: object = list(range(200_000))
    for _ in range(95):
        node = {"$tuple": [node]}
    manifest = {"format": "minitorch.save", "version": 1, "byteorder": "little", "storages": [], "object": node}
    data = rezip([("minitorch.json", json.dumps(manifest).encode())])
    started = time.perf_counter()
    loaded = torch.load(io.BytesIO(data))
    assert time.perf_counter() - started < 3.0
    for _ in range(95):
        (loaded,) = loaded
    assert loaded[-1] == 199_999


# PyTorch's format (what save writes now): the same guarantees for data.pkl and its records ------------------------


def torch_checkpoint(legacy: bool = False) -> bytes:
    base = torch.arange(12.0).reshape(3, 4)
    obj = {"model": {"w": base, "wt": base.t(), "row": base[1], "e": torch.ones(1).expand(5),
                     "bias": torch.nn.Parameter(torch.zeros(4))},
           "ints": torch.tensor([[1, -2], [3, 4]]), "mask": torch.tensor([True, False]),
           "half": torch.tensor([0.5], dtype=torch.float16), 0: {"step": 3, "betas": (0.9, 0.999)},
           "meta": [torch.Size([2, 3]), torch.float16, torch.device("cpu"), None, "text", {1, 2}, 1 + 2j]}
    buffer = io.BytesIO()
    torch.save(obj, buffer, _use_new_zipfile_serialization=not legacy)
    return buffer.getvalue()


INTERESTING = [0, 1, 0x7F, 0x80, 0xFF, ord("c"), ord("R"), ord("Q"), ord("("), ord("t"), ord("."), ord("h")]


def mutate_pickle(rng: random.Random, data: bytes) -> bytes:
    """Damage data.pkl itself (and re-zip it, so the CRC matches and the unpickler sees the bytes), or the
    archive around it as for the JSON format."""
    entries = members(data)
    kind = rng.randrange(6)
    if kind >= 4:
        return mutate(rng, data, json_edits=False)  # archive-level damage: flips, cuts, duplicates, compression, headers
    index = next(i for i, (name, _) in enumerate(entries) if name.endswith("data.pkl"))
    pkl = bytearray(entries[index][1])
    if kind == 0:  # overwrite bytes with opcodes and boundary values
        for _ in range(rng.randint(1, 4)):
            pkl[rng.randrange(len(pkl))] = rng.choice(INTERESTING + [rng.randrange(256)])
    elif kind == 1:  # cut the pickle short, or splice a piece of it elsewhere
        if rng.random() < 0.5:
            del pkl[rng.randrange(len(pkl)):]
        else:
            start = rng.randrange(len(pkl))
            piece = pkl[start:start + rng.randint(1, 40)]
            at = rng.randrange(len(pkl))
            pkl[at:at] = piece
    elif kind == 2:  # a huge or negative integer where a small one was (numel, offsets, sizes, strides)
        spots = [i for i in range(len(pkl) - 1) if pkl[i] == ord("K")]
        at = rng.choice(spots)
        value = rng.choice(HUGE + NEGATIVE)
        raw = value.to_bytes(value.bit_length() // 8 + 1, "little", signed=True)  # LONG1: a length, then bytes
        pkl[at:at + 2] = b"\x8a" + bytes([len(raw)]) + raw
    else:  # drop or resize a storage record
        records = [i for i, (name, _) in enumerate(entries) if "/data/" in name]
        pick = rng.choice(records)
        if rng.random() < 0.3:
            entries.pop(pick)
            index -= pick < index
        else:
            name, payload = entries[pick]
            entries[pick] = (name, payload[: rng.randrange(len(payload) + 1)] + b"\0" * rng.randrange(9))
    entries[index] = (entries[index][0], bytes(pkl))
    return rezip(entries)


def test_mutated_pytorch_format_checkpoints_load_or_raise_serialization_error(tmp_path):
    data = torch_checkpoint()
    torch.load(io.BytesIO(data))
    for case in range(CASES):
        load_within_bounds(mutate_pickle(random.Random(case), data), case, tmp_path / "ckpt.pt" if case % 2 else None)


# PyTorch's legacy format (no zip: pickles and raw storages back to back) ------------------------------------------


def mutate_legacy(rng: random.Random, data: bytes) -> bytes:
    """Flip bytes to opcodes and boundary values, cut the file, splice a piece of it elsewhere, or put a huge
    or negative integer where a small one was (element counts, sizes, the per-storage counts)."""
    data = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0:
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.choice(INTERESTING + [rng.randrange(256)])
    elif kind == 1:
        del data[rng.randrange(len(data)):]
    elif kind == 2:
        start = rng.randrange(len(data))
        piece = data[start:start + rng.randint(1, 40)]
        at = rng.randrange(len(data))
        data[at:at] = piece
    else:
        spots = [i for i in range(len(data) - 1) if data[i] == ord("K")]
        at = rng.choice(spots)
        value = rng.choice(HUGE + NEGATIVE)
        raw = value.to_bytes(value.bit_length() // 8 + 1, "little", signed=True)
        data[at:at + 2] = b"\x8a" + bytes([len(raw)]) + raw
    return bytes(data)


def test_mutated_legacy_format_checkpoints_load_or_raise_serialization_error(tmp_path):
    data = torch_checkpoint(legacy=True)
    assert torch.load(io.BytesIO(data))["model"]["wt"].tolist() == torch.arange(12.0).reshape(3, 4).t().tolist()
    for case in range(CASES):
        load_within_bounds(mutate_legacy(random.Random(case), data), case, tmp_path / "ckpt.pt" if case % 2 else None)
