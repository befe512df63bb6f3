# Leaks one malloc'd block of a size given on the command line and exits with a status given
# there: for tests/record/test_python.sh.  Args: SIZE STATUS
import ctypes
import sys

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
block = libc.malloc(int(sys.argv[1]))  # never freed
sys.exit(int(sys.argv[2]))
