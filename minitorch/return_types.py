"""``torch.return_types``: the named tuples of ops with several results (``max(dim)``, ``sort``, ``topk``...).

Each is a tuple (unpacking and indexing work) whose fields also have names (``r.values``,
``r.indices``), and prints like PyTorch's structseq.
"""

from __future__ import annotations

from collections import namedtuple


def _structseq(name: str, fields: tuple) -> type:
    base = namedtuple(name, fields)

    def __repr__(self) -> str:
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"torch.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})


_VALUES_INDICES = ("values", "indices")

max = _structseq("max", _VALUES_INDICES)  # noqa: A001 - PyTorch's names
min = _structseq("min", _VALUES_INDICES)  # noqa: A001
median = _structseq("median", _VALUES_INDICES)
mode = _structseq("mode", _VALUES_INDICES)
kthvalue = _structseq("kthvalue", _VALUES_INDICES)
sort = _structseq("sort", _VALUES_INDICES)
topk = _structseq("topk", _VALUES_INDICES)
aminmax = _structseq("aminmax", ("min", "max"))
cummax = _structseq("cummax", _VALUES_INDICES)
cummin = _structseq("cummin", _VALUES_INDICES)
histogram = _structseq("histogram", ("hist", "bin_edges"))

__all__ = ["max", "min", "median", "mode", "kthvalue", "sort", "topk", "aminmax", "cummax", "cummin",
           "histogram"]
