"""How a tensor and its views map onto one storage, drawn as cells (``draw_storage``)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from html import escape

from ..tensor import Tensor
from ._drawing import LINE_HEIGHT, MARGIN, ROW_GAP, Drawing, _dtype, _format, _svg_document, _text_width

VIEW_COLOURS = ["#1565c0", "#2e7d32", "#ef6c00", "#6a1b9a", "#c62828"]
LIGHT_COLOURS = ["#bbdefb", "#c8e6c9", "#ffe0b2", "#e1bee7", "#ffcdd2"]  # the highlighted element's fill
SMALL = 9  # font size of indices and storage positions
CELL_HEIGHT = 38  # a value (12px) over its storage position (9px)
MAX_DIMS = 4
# shown per dimension before the middle is elided: columns (last dim), rows, and the 2-D blocks of 3-D/4-D
SHOWN_COLUMNS, SHOWN_ROWS, SHOWN_BLOCKS = 12, 10, 4
STRIP_SHOWN, STRIP_ROW = 256, 16  # storage cells drawn (then the first ones ... the last ones), cells per row
MAX_WIDTH = 960  # 3-D blocks wrap onto a new line past this width
ELLIPSIS = "\u2026"


class _Canvas:
    """SVG elements with the extent they cover, so the picture is sized to what was drawn."""

    def __init__(self):
        self.body: list[str] = []
        self.right = self.bottom = 0.0

    def _cover(self, right: float, bottom: float) -> None:
        self.right, self.bottom = max(self.right, right), max(self.bottom, bottom)

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str = "none", extra: str = "") -> None:
        self.body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}" '
                         f'stroke="{stroke}"{extra}/>')
        self._cover(x + w, y + h)

    def text(self, x: float, y: float, text: str, size: int = 12, anchor: str = "start", extra: str = "") -> None:
        """``y`` is the baseline; ``anchor`` is SVG's text-anchor (start, middle, end)."""
        size_attr = f' font-size="{size}"' if size != 12 else ""
        extra = f" {extra}" if extra else ""
        self.body.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{size_attr}{extra}>'
                         f"{escape(text)}</text>")
        width = _text_width(text, size)
        self._cover(x + {"start": width, "middle": width / 2, "end": 0}[anchor], y + size * 0.3)

    def svg(self) -> str:
        return _svg_document(self.right + MARGIN, self.bottom + MARGIN, self.body)


def _shown(n: int, limit: int) -> list[int | None]:
    """The indices drawn along a dimension of size ``n``: all of them, or the first and last few around None."""
    if n <= limit:
        return list(range(n))
    head = limit // 2
    tail = limit - head - 1
    return list(range(head)) + [None] + list(range(n - tail, n))


def draw_storage(tensor: Tensor, *views: Tensor, names: Sequence[str] | None = None,
                 highlight: bool | Sequence[Sequence[int] | None] = True) -> Drawing:
    """Draw a tensor's storage as a row of cells, and each view of it as a grid that says where each element lives.

    Element ``[i, j, ...]`` of a view is ``storage[offset + i * stride[0] + j * stride[1] + ...]``. Every
    cell of a view shows its value and that storage position (``s[4]``); a coloured tick under a storage
    cell marks each view that reads it. One element per view is highlighted, with its sum written out,
    in the view's colour both in the grid and on the storage (``highlight=False`` for none, or one index
    tuple per tensor, ``None`` for the default). Pass more ``views`` of the same storage (``t.t()``,
    ``t[:, 1]``, ...) to see them side by side. Tensors of up to 4 dimensions are drawn: 3-D and 4-D ones
    as their 2-D blocks; long dimensions and storages show their first and last entries around an ellipsis.
    """
    tensors = [tensor, *views]
    names = list(names) if names is not None else ["tensor"] + [f"view {k}" for k in range(1, len(tensors))]
    if len(names) != len(tensors):
        raise ValueError(f"draw_storage(): got {len(tensors)} tensors but {len(names)} names")
    for name, t in zip(names, tensors):
        if not isinstance(t, Tensor) or str(t.layout) != "torch.strided":
            raise TypeError(f"draw_storage(): {name} must be a strided Tensor, got {getattr(t, 'layout', type(t))}")
        if t._storage is not tensor._storage:
            raise ValueError(f"draw_storage(): {name} does not share storage with {names[0]} (it is a copy); "
                             "draw it separately")
        if t.dim() > MAX_DIMS:
            raise ValueError(f"draw_storage(): {name} has {t.dim()} dimensions; at most {MAX_DIMS} are drawn")
    points = _highlights(tensors, names, highlight)
    storage = tensor._storage
    if storage.device.type == "meta":
        values = ["?"] * len(storage)
    else:
        values = [_format(v) for v in tensor.storage().tolist()]
    strip = _shown(len(storage), STRIP_SHOWN)
    shown_values = [values[i] for i in strip if i is not None]
    cell_width = max([_text_width(v) for v in shown_values] + [_text_width(f"s[{len(storage)}]", SMALL), 24]) + 12
    canvas = _Canvas()
    y = MARGIN + 12
    canvas.text(MARGIN, y, _storage_title(tensor), extra='font-weight="bold"')
    used = [(VIEW_COLOURS[k % len(VIEW_COLOURS)], _read_indices(t)) for k, t in enumerate(tensors)]
    marked = {}
    for k, point in enumerate(points):
        if point is not None:
            marked.setdefault(_storage_index(tensors[k], point), LIGHT_COLOURS[k % len(LIGHT_COLOURS)])
    y = _draw_strip(canvas, values, strip, cell_width, y + 8, used, marked)
    for k, (name, t, point) in enumerate(zip(names, tensors, points)):
        y = _draw_view(canvas, t, name, k, values, cell_width, y + ROW_GAP / 2, point)
    return Drawing(canvas.svg())


def _highlights(tensors: list[Tensor], names: list[str], highlight) -> list[tuple[int, ...] | None]:
    """The element of each view whose address is written out (None: nothing highlighted in that view)."""
    if highlight is True or highlight is None:
        wanted: list = [None] * len(tensors)
    elif highlight is False:
        return [None] * len(tensors)
    else:
        wanted = list(highlight)
        if len(wanted) != len(tensors):
            raise ValueError(f"draw_storage(): highlight has {len(wanted)} entries for {len(tensors)} tensors")
    points = []
    for name, t, point in zip(names, tensors, wanted):
        if point is None:  # the default: index 1 along each dimension (0 where it has one entry)
            points.append(None if t.numel() == 0 else tuple(min(1, n - 1) for n in t.shape))
            continue
        point = tuple(int(i) for i in point)
        if len(point) != t.dim() or any(not 0 <= i < n for i, n in zip(point, t.shape)):
            raise IndexError(f"draw_storage(): highlight {point} is not an element of {name} (size {tuple(t.shape)})")
        points.append(point)
    return points


def _storage_index(t: Tensor, position: Sequence[int]) -> int:
    return t.storage_offset() + sum(i * s for i, s in zip(position, t.stride()))


def _read_indices(t: Tensor) -> set[int]:
    """Every storage position ``t`` reads (the elided elements too), for the ticks under the strip."""
    if t.numel() > 1 << 16:  # a view of a very big storage: the ticks of the drawn strip cells suffice
        t = t[tuple(slice(0, min(n, SHOWN_COLUMNS)) for n in t.shape)]
    return {_storage_index(t, p) for p in itertools.product(*(range(n) for n in t.shape))}


def _draw_strip(canvas: _Canvas, values: list[str], strip: list[int | None], cell_width: float, top: float,
                used: list[tuple[str, set[int]]], marked: dict[int, str]) -> float:
    """The storage cells in rows of ``STRIP_ROW`` (one row when it is short), each with its index above it
    and a coloured tick under it for each view that reads it. Returns the y below the strip."""
    per_row = len(strip) if len(strip) <= 24 else STRIP_ROW
    pitch = SMALL + 4 + CELL_HEIGHT + 4 * len(used) + 8
    for number, index in enumerate(strip):
        row, column = divmod(number, per_row) if per_row else (0, 0)
        x, y = MARGIN + column * cell_width, top + row * pitch + SMALL + 4
        if index is None:
            canvas.text(x + cell_width / 2, y + CELL_HEIGHT / 2 + 4, ELLIPSIS, anchor="middle")
            continue
        canvas.text(x + cell_width / 2, y - 3, str(index), SMALL, "middle", 'fill="#777"')
        canvas.rect(x, y, cell_width, CELL_HEIGHT, marked.get(index, "#fafafa"), "#333")
        canvas.text(x + cell_width / 2, y + CELL_HEIGHT / 2 + 4, values[index], anchor="middle")
        for k, (colour, indices) in enumerate(used):
            if index in indices:
                canvas.rect(x + 3, y + CELL_HEIGHT + 2 + 4 * k, cell_width - 6, 3, colour)
    rows = -(-len(strip) // per_row) if per_row else 1
    return top + max(rows, 1) * pitch


def _draw_view(canvas: _Canvas, t: Tensor, name: str, k: int, values: list[str], cell_width: float, top: float,
               point: tuple[int, ...] | None) -> float:
    """A view's title, its address formula, the highlighted element's sum, then its cells as 2-D blocks."""
    colour, light = VIEW_COLOURS[k % len(VIEW_COLOURS)], LIGHT_COLOURS[k % len(LIGHT_COLOURS)]
    y = top + 12
    canvas.text(MARGIN, y, _view_title(name, t), extra=f'fill="{colour}" font-weight="bold"')
    y += LINE_HEIGHT
    canvas.text(MARGIN, y, _formula(t), extra=f'fill="{colour}"')
    if point is not None:
        y += LINE_HEIGHT
        canvas.text(MARGIN, y, _worked(name, t, point), extra=f'fill="{colour}"')
    y += 10
    shape = tuple(t.shape)
    if t.numel() == 0:
        canvas.text(MARGIN, y + 14, "(no elements: nothing in the storage is read)", extra='fill="#777"')
        return y + 20
    if len(shape) <= 2:
        return _draw_block(canvas, t, (), MARGIN, y, values, cell_width, colour, light, point)[1]
    if len(shape) == 3:  # the blocks side by side, wrapping onto a new line past MAX_WIDTH
        lines = [[None if b is None else (b,) for b in _shown(shape[0], SHOWN_BLOCKS)]]
    else:  # a line of blocks per index of the first dimension
        lines = [[None] if a is None else [None if b is None else (a, b) for b in _shown(shape[1], SHOWN_BLOCKS)]
                 for a in _shown(shape[0], SHOWN_BLOCKS)]
    width, gap = _block_width(t, cell_width), 20
    for line in lines:
        if line == [None]:  # elided lines of blocks (4-D)
            canvas.text(MARGIN + 12, y + 12, ELLIPSIS, anchor="middle")
            y += 16 + gap
            continue
        x, bottom = MARGIN, y + 24
        for key in line:
            if len(shape) == 3 and key is not None and x > MARGIN and x + width > MAX_WIDTH:
                x, y = MARGIN, bottom + gap
            if key is None:  # elided blocks
                canvas.text(x + 12, y + _block_height(t) / 2 + 4, ELLIPSIS, anchor="middle")
                x += 24 + gap
                continue
            right, block_bottom = _draw_block(canvas, t, key, x, y, values, cell_width, colour, light, point)
            x, bottom = max(right, x + width) + gap, max(bottom, block_bottom)  # a title may be wider than its cells
        y = bottom + gap
    return y - gap


def _row_header_width(t: Tensor) -> float:
    rows = t.shape[-2] if t.dim() >= 2 else 0
    return _text_width(str(max(rows - 1, 0)), SMALL) + 8 if t.dim() >= 2 else 0


def _block_width(t: Tensor, cell_width: float) -> float:
    columns = _shown(t.shape[-1], SHOWN_COLUMNS) if t.dim() else [0]
    cells = sum(cell_width if c is not None else 24 for c in columns)
    title = _text_width(_block_title(t, (0,) * max(t.dim() - 2, 0))) if t.dim() > 2 else 0
    return max(_row_header_width(t) + cells, title)


def _block_height(t: Tensor) -> float:
    rows = _shown(t.shape[-2], SHOWN_ROWS) if t.dim() >= 2 else [0]
    return 12 + SMALL + 6 + sum(CELL_HEIGHT if r is not None else 20 for r in rows)


def _block_title(t: Tensor, key: tuple[int, ...]) -> str:
    return "[" + ", ".join([str(i) for i in key] + [":", ":"]) + "]"


def _draw_block(canvas: _Canvas, t: Tensor, key: tuple[int, ...], left: float, top: float, values: list[str],
                cell_width: float, colour: str, light: str, point) -> tuple[float, float]:
    """One 2-D block (the last two dimensions at fixed leading indices ``key``), with row indices on its
    left and column indices above. Returns its right and bottom edges."""
    shape = tuple(t.shape)
    y = top
    if key:  # a block of a 3-D or 4-D view: its leading indices
        y += 12
        canvas.text(left, y, _block_title(t, key), extra='fill="#555"')
    rows = _shown(shape[-2], SHOWN_ROWS) if len(shape) >= 2 else [0]
    columns = _shown(shape[-1], SHOWN_COLUMNS) if shape else [0]
    header = _row_header_width(t)
    y += SMALL + 6 if shape else 0
    x0 = left + header
    xs, x = [], x0
    for c in columns:
        xs.append(x)
        x += cell_width if c is not None else 24
    right = x
    if shape:  # column indices above
        for c, cx in zip(columns, xs):
            width = cell_width if c is not None else 24
            canvas.text(cx + width / 2, y - 4, ELLIPSIS if c is None else str(c), SMALL, "middle", 'fill="#777"')
    for r in rows:
        height = CELL_HEIGHT if r is not None else 20
        if len(shape) >= 2:
            canvas.text(left + header - 6, y + height / 2 + 3, ELLIPSIS if r is None else str(r), SMALL, "end",
                        'fill="#777"')
        for c, cx in zip(columns, xs):
            width = cell_width if c is not None else 24
            if r is None or c is None:
                canvas.text(cx + width / 2, y + height / 2 + 4, ELLIPSIS, anchor="middle")
                continue
            position = (*key, r, c)[-len(shape):] if shape else ()
            index = _storage_index(t, position)
            chosen = point is not None and tuple(point) == position
            canvas.rect(cx, y, width, height, light if chosen else "white", colour,
                        ' stroke-width="2.5"' if chosen else "")
            canvas.text(cx + width / 2, y + 16, values[index] if 0 <= index < len(values) else "?", anchor="middle",
                        extra='font-weight="bold"' if chosen else "")
            canvas.text(cx + width / 2, y + 31, f"s[{index}]", SMALL, "middle", 'fill="#777"')
        y += height
    return right, y


def _storage_title(t: Tensor) -> str:
    return f"storage: {len(t._storage)} x {_dtype(t)} on {t.device}, version {t._storage.version}"


def _view_title(name: str, t: Tensor) -> str:
    size = tuple(t.shape)
    return f"{name}: size {size}  stride {t.stride()}  offset {t.storage_offset()}  contiguous={t.is_contiguous()}"


def _formula(t: Tensor) -> str:
    letters = "ijklmnop"[: t.dim()]
    terms = [str(t.storage_offset())] + [f"{letter}*{s}" for letter, s in zip(letters, t.stride())]
    return f"[{', '.join(letters)}] -> storage[{' + '.join(terms)}]"


def _worked(name: str, t: Tensor, point: tuple[int, ...]) -> str:
    """The formula for one element, with the numbers filled in."""
    terms = [str(t.storage_offset())] + [f"{i}*{s}" for i, s in zip(point, t.stride())]
    where = ", ".join(str(i) for i in point)
    return f"{name}[{where}] -> storage[{' + '.join(terms)}] = storage[{_storage_index(t, point)}]"
