"""minitorch.nn.functional: the functional form of layers, activations and losses (torch.nn.functional).

The functions here are the checked entry points: each refuses a non-Tensor where it takes a Tensor, with
PyTorch's TypeError (see ``ops/arguments.py``); the submodules' own calls to each other are not checked
again."""

from ...ops.arguments import checked_namespace
from . import activation as _activation
from . import attention as _attention
from . import conv as _conv
from . import ctc_loss as _ctc_loss
from . import distance as _distance
from . import dropout as _dropout
from . import interpolate as _interpolate
from . import linear as _linear
from . import loss as _loss
from . import margin_loss as _margin_loss
from . import normalization as _normalization
from . import padding as _padding
from . import pixel_shuffle as _pixel_shuffle
from . import pooling as _pooling
from . import sparse as _sparse
from . import unpool as _unpool
from .activation import *  # noqa: F403
from .attention import *  # noqa: F403
from .conv import *  # noqa: F403
from .ctc_loss import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .interpolate import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .margin_loss import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixel_shuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .sparse import *  # noqa: F403
from .unpool import *  # noqa: F403

checked_namespace(globals(), (
    _activation, _attention, _conv, _ctc_loss, _distance, _dropout, _interpolate, _linear, _loss, _margin_loss,
    _normalization, _padding, _pixel_shuffle, _pooling, _sparse, _unpool,
))
