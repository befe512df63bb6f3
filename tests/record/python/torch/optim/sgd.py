# A fake optimizer: its step() runs a callback the test passes, inside the hooked call.
from .optimizer import Optimizer


class SGD(Optimizer):
    def step(self, closure=None):
        if closure is not None:
            closure()
