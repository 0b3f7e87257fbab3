"""minitorch.optim: optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, SparseAdam) and learning-rate schedulers.

Names, defaults and update formulas follow ``torch.optim``. Updates run in place on the parameters'
arrays under ``no_grad``; see optimizer.py for the shared machinery and each file for one algorithm.
"""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "SparseAdam", "lr_scheduler"]
