"""minitorch: an autograd-first deep-learning micro-framework with PyTorch's public API.

``import minitorch as torch`` runs PyTorch-style code for everything minitorch implements.
"""

import importlib

from . import (  # accelerator, amp, backends, cuda, mps: the platform modules (docs/platform.md)
    _dtype,
    accelerator,
    amp,
    ao,
    autograd,
    backends,
    cuda,
    distributed,
    distributions,
    fft,
    futures,
    jit,
    linalg,
    mps,
    multiprocessing,
    nn,
    onnx,
    optim,
    profiler,
    quantization,
    sparse,
    special,
    testing,
    utils,
    viz,
)
from ._constants import e, inf, nan, newaxis, pi
from ._device import device, set_default_device
from ._dtype import (
    bfloat16,
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    qint8,
    qint32,
    quint8,
    set_default_dtype,
    short,
    uint8,
)
from ._finfo import finfo, iinfo
from ._matmul_precision import get_float32_matmul_precision, set_float32_matmul_precision
from ._runtime import (
    get_default_device,
    get_num_threads,
    get_printoptions,
    is_floating_point,
    is_tensor,
    numel,
    result_type,
    set_num_threads,
    set_printoptions,
)
from ._tensortype import *
from .amp import autocast
from .amp.autocast_mode import get_autocast_dtype, is_autocast_enabled, set_autocast_dtype, set_autocast_enabled
from .amp.grad_scaler import amp_foreach_non_finite_check_and_unscale_ as _amp_foreach_non_finite_check_and_unscale_
from .amp.grad_scaler import amp_update_scale_ as _amp_update_scale_
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.grad_mode import is_inference_mode_enabled
from .creation import *
from .layout import layout, sparse_coo, strided
from .linalg.legacy import *
from .memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    legacy_contiguous_format,
    memory_format,
    preserve_format,
)
from .ops.arithmetic import *
from .ops.blas import *
from .ops.comparison import *
from .ops.complex import *

# ops (their Tensor methods come from minitorch/_tensor_methods.py)
from .ops.conversion import *
from .ops.histogram import *
from .ops.indexing import *
from .ops.inplace import *
from .ops.pointwise import *
from .ops.reduction import *
from .ops.resize import *
from .ops.shape import *
from .ops.sorting import *
from .ops.views import *
from .random import *
from .sampling import *
from .serialization import *
from .storage import TypedStorage, UntypedStorage
from .tensor import Size, Tensor

__version__ = "0.1.0"

from . import creation as _creation  # noqa: E402
from . import ops as _ops  # noqa: E402
from . import random as _random  # noqa: E402
from ._tensor_methods import install as _install_tensor_methods  # noqa: E402
from .linalg import legacy as _legacy_linalg  # noqa: E402
from .nn.functional.activation import torch_log_softmax as log_softmax  # noqa: E402
from .nn.functional.activation import torch_softmax as softmax  # noqa: E402
from .ops import out as _out  # noqa: E402
from .ops.arguments import checked_namespace as _checked_namespace  # noqa: E402
from .ops.arguments import install_numpy_aliases as _numpy_aliases  # noqa: E402
from .quantization import (  # noqa: E402
    dequantize,
    fake_quantize_per_channel_affine,
    fake_quantize_per_tensor_affine,
    int_repr,
    per_channel_affine,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qscheme,
    quantize_per_channel,
    quantize_per_tensor,
)
from .sparse import sparse_coo_tensor  # noqa: E402

_install_tensor_methods()  # Tensor's methods and operators, from one table (minitorch/_tensor_methods.py)
del _install_tensor_methods

# torch.relu(array) / torch.sum([1, 2]): PyTorch's TypeError naming the argument (ops/arguments.py)
_checked_namespace(globals(), (_ops.arithmetic, _ops.blas, _ops.comparison, _ops.complex, _ops.conversion,
                               _ops.histogram, _ops.indexing, _ops.pointwise, _ops.reduction, _ops.shape,
                               _ops.sorting, _ops.views, _creation, _random, _legacy_linalg))
_out.install(globals())  # torch.add(a, b, out=c), torch.sum(x, out=s), ...
# torch.sum(x, axis=0, keepdims=True): numpy's names, accepted by PyTorch's argument parser (Tensor methods: the table)
_numpy_aliases(globals(), [name for name in list(globals()) if not name.startswith("_")])
del _out, _checked_namespace, _numpy_aliases
from . import (
    compiler,  # noqa: E402 - torch.compiler
    func,  # noqa: E402 - torch.func
)
from .autograd import functional as _autograd_functional  # noqa: E402,F401 - minitorch.autograd.functional
from .autograd import profiler as _autograd_profiler  # noqa: E402,F401 - minitorch.autograd.profiler
from .compiler import compile  # noqa: E402 - torch.compile


def __getattr__(name: str):
    """``minitorch.fx`` loads on first use: it traces through the namespaces above (and imports this package)."""
    if name == "fx":
        return importlib.import_module(f"{__name__}.fx")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
