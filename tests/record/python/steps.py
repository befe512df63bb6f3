# Training steps through the fake torch of this folder, for tests/record/test_python.sh.
# Args: MODE LEAK_SIZE
#   two:   4 iterations, each stepping two optimizers (one step per iteration must come of it);
#          every step mallocs and frees a block of 7000 + its number, and step 2 also mallocs
#          LEAK_SIZE bytes it never frees
#   raise: 4 iterations of one optimizer whose step 2 raises
import ctypes
import sys

import torch

mode = sys.argv[1]
leak_size = int(sys.argv[2])
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
kept = []


def work(n):
    libc.free(libc.malloc(7000 + n))
    if mode == "two" and n == 2:
        kept.append(libc.malloc(leak_size))
    if mode == "raise" and n == 2:
        raise ValueError("step 2 fails")


first = torch.optim.SGD([1.0])
second = torch.optim.SGD([2.0])
for n in range(1, 5):
    try:
        first.step(lambda: work(n))
    except ValueError:
        pass
    if mode == "two":
        second.step(lambda: libc.free(libc.malloc(6000)))
