"""The layer classes of minitorch.nn, one family per file (each file's ``__all__`` is re-exported)."""

from . import (
    activation,
    container,
    conv,
    dropout,
    flatten,
    linear,
    loss,
    module,
    normalization,
    pooling,
    rnn,
    sparse,
    transformer,
)
from .activation import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import *  # noqa: F403
from .normalization import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403

__all__ = [
    name
    for family in (module, container, activation, conv, dropout, flatten, linear, loss, normalization, pooling, rnn,
                   sparse, transformer)
    for name in family.__all__
]
