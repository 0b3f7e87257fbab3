"""``minitorch.backends``: PyTorch's ``torch.backends`` flags (``cudnn``, ``cuda.matmul``, ``mps``, ``mkldnn``,
``openmp``, ``mkl``, ``opt_einsum``, ``cpu``), with CPU-only PyTorch's values on a machine without a GPU.

(minitorch's own device-backend registry is ``minitorch._backends``; third parties register through
``minitorch.utils.backend_registration``.)
"""

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
