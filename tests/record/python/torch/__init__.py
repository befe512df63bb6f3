# A fake torch for tests/record/test_python.sh: it tests memscope-record's sitecustomize hook
# wiring (lazy registration when torch.optim.optimizer is imported, pre/post step hooks), not torch.
from . import optim  # noqa: F401  (torch/__init__.py imports torch.optim too)
