"""minitorch.sparse: the COO layout (``torch.sparse_coo``) and the functions of ``torch.sparse``.

``sparse_coo_tensor`` builds one, ``Tensor.to_sparse()`` converts; sparse tensors flow through
``backward()`` with PyTorch's masked-gradient semantics (docs: SEMANTICS.md section 3).
"""

from . import dispatch  # noqa: F401  (registers the sparse implementations of dense ops)
from .functional import addmm, log_softmax, mm, softmax, sparse_coo_tensor, sum  # noqa: A004
from .tensor import SparseTensor

__all__ = ["SparseTensor", "addmm", "log_softmax", "mm", "softmax", "sparse_coo_tensor", "sum"]
