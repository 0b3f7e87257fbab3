"""Layouts: how a tensor's memory is interpreted (strided arrays, or sparse COO indices+values)."""


class layout:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


strided = layout("strided")
sparse_coo = layout("sparse_coo")
