"""The layer classes of minitorch.nn, one family per file (each file's ``__all__`` is re-exported)."""

from . import (  # batchnorm (beyond SyncBatchNorm), instancenorm and utils only give PyTorch's module paths
    activation,
    batchnorm,  # noqa: F401
    channelshuffle,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,  # noqa: F401
    linear,
    loss,
    module,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
    utils,  # noqa: F401
)
from .activation import *  # noqa: F403
from .batchnorm import SyncBatchNorm  # the rest of batchnorm's names come from normalization
from .channelshuffle import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403

# lazy holds LazyModuleMixin, which torch.nn does not export either
__all__ = [name for family in (
    activation,
    channelshuffle,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    linear,
    loss,
    module,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
) for name in family.__all__] + ["SyncBatchNorm"]
