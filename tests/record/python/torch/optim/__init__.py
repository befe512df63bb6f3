# The fake torch's optim package: like torch's, it imports optimizer through its optimizers.
from .sgd import SGD  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
