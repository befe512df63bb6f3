# A Python program with planted leaks for memscope-record's Python frames: blocks kept alive to
# the end, allocated in a function, in a thread, in a generator and through ctypes (libc's
# malloc, never freed), and os._exit at the end so that Python frees none of them. Each allocating statement ends with a "# leak:NAME" comment, by which
# test_pyframes.sh finds its line. The function's block is the biggest: it holds most memory at
# the peak.
import ctypes
import os
import threading

KEEP = []
MiB = 1 << 20


def in_function():
    KEEP.append(bytearray(24 * MiB))  # leak:function


def thread_body():
    KEEP.append(bytearray(3 * MiB + 1))  # leak:thread


def generator():
    for i in range(3):
        yield bytearray(2 * MiB + 2 + i)  # leak:generator


def through_ctypes():
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    KEEP.append(libc.malloc(5 * MiB + 5))  # leak:ctypes


def main():
    in_function()
    t = threading.Thread(target=thread_body)
    t.start()
    t.join()
    KEEP.extend(generator())
    through_ctypes()


main()
os._exit(0)
