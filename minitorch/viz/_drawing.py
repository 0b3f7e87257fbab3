"""What every picture of minitorch.viz is made of: the ``Drawing`` Jupyter shows, SVG text, and short labels."""

from __future__ import annotations

from html import escape
from pathlib import Path

from ..tensor import Tensor

CHAR_WIDTH, LINE_HEIGHT, PAD = 7.2, 15, 6  # 12px monospace text
ROW_GAP, COLUMN_GAP, MARGIN = 44, 20, 12
FONT = 'font-family="monospace" font-size="12"'


class Drawing:
    """An SVG picture: shown inline by Jupyter, saved with ``save(path)``, raw text in ``.svg``."""

    def __init__(self, svg: str):
        self.svg = svg

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path: str | Path) -> Path:
        """Write the SVG to ``path`` (a ``.svg`` file any browser opens) and return the path."""
        path = Path(path)
        path.write_text(self.svg, encoding="utf-8")
        return path

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self.svg)} characters of SVG>"


class GraphDrawing(Drawing):
    """A drawn autograd graph; ``to_dot()`` gives the same graph as Graphviz DOT text."""

    def __init__(self, svg: str, dot: str):
        super().__init__(svg)
        self._dot = dot

    def to_dot(self) -> str:
        return self._dot


# ------------------------------------------------------------------------------------------------
# labels


def _shape(t: Tensor) -> str:
    return "(" + ", ".join(str(n) for n in t.shape) + ("," if len(t.shape) == 1 else "") + ")"


def _dtype(t: Tensor) -> str:
    return str(t.dtype).replace("torch.", "")


def _format(value) -> str:
    if isinstance(value, float):
        text = f"{value:.4g}"
        return text if any(c in text for c in ".ein") else text + "."  # 2. as PyTorch prints floats
    return str(value)


def _values(t: Tensor, limit: int = 4) -> str | None:
    """The values of a small tensor on one short line (None when too big or without data)."""
    if t.numel() > limit or t.device.type == "meta":
        return None
    flat = t.detach().reshape(-1).tolist()
    return "[" + ", ".join(_format(v) for v in flat) + "]"


def _describe(t: Tensor) -> str:
    return f"{_shape(t)} {_dtype(t)}"


def _describe_meta(shape: tuple, dtype) -> str:
    """``_describe`` for a tensor autograd did not keep: the shape and dtype its consumer recorded."""
    text = "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
    return f"{text} {str(dtype).replace('torch.', '')}"


def _preview(t: Tensor, limit: int = 4) -> str:
    """A tensor's values on one short line: all of them when few, else the first ones and an ellipsis."""
    if t.device.type == "meta":
        return "?"
    if t.numel() <= limit:
        return _values(t, limit) or "[]"
    head = t.detach().reshape(-1)[: limit - 1].tolist()
    return "[" + ", ".join(_format(v) for v in head) + ", ...]"


def _svg_document(width: float, height: float, body: list[str]) -> str:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" {FONT}>'
        '<defs><marker id="minitorch-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>'
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>'
    )
    return "\n".join([head, *body, "</svg>"])


def _text(x: float, y: float, text: str, extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" {extra}>{escape(text)}</text>'



def _text_width(text: str, size: int = 12) -> float:
    """An upper bound for monospace text (DejaVu Sans Mono advances 0.602 em; 0.61 leaves slack)."""
    return len(text) * size * 0.61

