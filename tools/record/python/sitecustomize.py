# memscope-record's Python hook: records the Python frames of every allocation, and marks the
# training steps of an unmodified PyTorch program.
#
# Python frames: under a recording, the shim's memscope_record_python_start (looked up in the
# process with ctypes.PyDLL, so called with the GIL held) installs the shim's C profile function
# on the main thread now, and, through threading.setprofile, on each thread the threading module
# starts later, at its first call; the shim then keeps each thread's Python stack itself.
#
# memscope-record puts the folder holding this file first on PYTHONPATH, so Python's site module
# imports it at start-up.  Under a recording (MEMSCOPE_RECORD_SPOOL set by the launcher) it waits,
# at no cost, for torch.optim.optimizer to be imported, then registers torch's global optimizer
# step hooks (torch >= 2.0): each step() of the first optimizer seen opens an mstx range named
# "step start" and closes it when the step returns, the steps memscope-leaks(1) reads.  The
# ranges come from the shim's exported functions, looked up in the process with ctypes; without
# the shim, or without those hooks in torch, nothing is registered.  Then it runs the next
# sitecustomize on sys.path (the user's or the distribution's, such as Debian's
# /usr/lib/python3.X/sitecustomize.py) as if this file were not there.
#
# Marks without torch need nothing installed: under memscope-record,
#     import ctypes
#     ctypes.CDLL(None).memscope_record_mark(b"text")
# records an mstx Mark, and memscope_record_range_start(b"text") / memscope_record_range_end(id)
# a range (set restype = ctypes.c_uint64 on range_start and argtypes = [ctypes.c_uint64] on
# range_end); without the shim the lookup raises AttributeError.
#
# Python 3.7+, standard library only.  Nothing here may raise into the program: every failure of
# our own leaves it unhooked; an error in the next sitecustomize propagates as it would without us.

import os
import sys

# the module whose import completes the registration, and its two global hook registrars
_TARGET = "torch.optim.optimizer"
_PRE = "register_optimizer_step_pre_hook"
_POST = "register_optimizer_step_post_hook"
_STEP_NAME = b"step start"


class _Steps(object):
    """One training step per step() of the first optimizer seen (several optimizers stepping in
    one iteration make one step); a step a failed step() left open ends when the next begins."""

    def __init__(self, start, end):
        self.start = start  # memscope_record_range_start(text) -> id, 0 when not recording
        self.end = end  # memscope_record_range_end(id)
        self.key = None  # weakref to the optimizer whose steps are the steps
        self.open = 0  # id of the open step's range, 0 for none

    def _mine(self, optimizer):
        owner = self.key() if self.key is not None else None
        if owner is None:  # the first optimizer, or the first after it was collected
            import weakref

            try:
                self.key = weakref.ref(optimizer)
            except TypeError:
                self.key = lambda: optimizer
            return True
        return owner is optimizer

    def pre(self, optimizer, args, kwargs):
        # torch's step pre hook: returning None leaves step()'s arguments as they are
        try:
            if self._mine(optimizer):
                if self.open:
                    rid, self.open = self.open, 0
                    self.end(rid)
                self.open = self.start(_STEP_NAME)
        except Exception:
            pass
        return None

    def post(self, optimizer, args, kwargs):
        try:
            if self.open and self.key is not None and self.key() is optimizer:
                rid, self.open = self.open, 0
                self.end(rid)
        except Exception:
            pass
        return None


def _register(module):
    """Called once the target module has run: registers the step hooks when both torch and the
    shim provide what they need; returns whether it did."""
    pre = getattr(module, _PRE, None)
    post = getattr(module, _POST, None)
    if not callable(pre) or not callable(post):
        return False
    import ctypes  # torch has imported it already: free here

    lib = ctypes.CDLL(None)
    start = getattr(lib, "memscope_record_range_start", None)
    end = getattr(lib, "memscope_record_range_end", None)
    if start is None or end is None:
        return False
    start.restype = ctypes.c_uint64
    start.argtypes = [ctypes.c_char_p]
    end.restype = None
    end.argtypes = [ctypes.c_uint64]
    steps = _Steps(start, end)
    pre(steps.pre)
    post(steps.post)
    return True


class _HookedLoader(object):
    """The target's own loader, running _register after the module; everything else is the
    original's, which the module and its spec get back before its code runs."""

    def __init__(self, loader, finder):
        self._loader = loader
        self._finder = finder

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        try:
            module.__loader__ = self._loader
            module.__spec__.loader = self._loader
        except Exception:
            pass
        self._loader.exec_module(module)
        self._finder.loaded(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _StepHookFinder(object):
    """A sys.meta_path finder that finds nothing itself: for the target it asks the finders after
    it and wraps the loader of what they find."""

    _memscope_record = True  # marks our finder: a second copy of this file installs none

    def __init__(self):
        self.busy = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _TARGET or self.busy:
            return None
        self.busy = True
        try:
            spec = None
            for finder in list(sys.meta_path):
                if finder is self:
                    continue
                find = getattr(finder, "find_spec", None)
                if find is None:
                    continue  # a legacy finder: let the import system ask it
                spec = find(fullname, path, target)
                if spec is not None:
                    break
            if spec is None or not hasattr(spec.loader, "exec_module"):
                return None  # the import system searches again without us
            spec.loader = _HookedLoader(spec.loader, self)
            return spec
        except Exception:
            return None
        finally:
            self.busy = False

    def loaded(self, module):
        # every run of the module registers on its own, fresh, hook tables
        try:
            _register(module)
        except Exception:
            pass


def _python_frames():
    """The shim's profile function on this thread and on the threads started later; False
    when the shim does not record Python frames."""
    import ctypes

    start = getattr(ctypes.PyDLL(None), "memscope_record_python_start", None)
    if start is None:
        return False
    start.restype = ctypes.c_int
    start.argtypes = [ctypes.py_object]
    if not start(sys._getframe()):
        return False
    import threading

    def _thread_start(frame, event, arg):
        # a new thread's first event: the shim's profile function replaces this one
        try:
            if not start(frame):
                sys.setprofile(None)
        except Exception:
            sys.setprofile(None)

    threading.setprofile(_thread_start)
    return True


def _install():
    if not os.environ.get("MEMSCOPE_RECORD_SPOOL"):
        return  # not recording: stay out of the import system
    if any(getattr(f, "_memscope_record", False) for f in sys.meta_path):
        return
    finder = _StepHookFinder()
    sys.meta_path.insert(0, finder)
    module = sys.modules.get(_TARGET)
    if module is not None:  # imported before us (a user's .pth file, say)
        finder.loaded(module)


def _next_sitecustomize():
    """The next sitecustomize on sys.path, skipping this file's folder and those of other copies
    of it that ran before (they hand their folders on in _memscope_chain); a new module not yet
    run, or None."""
    skip = list(globals().get("_memscope_chain") or ())
    skip.append(os.path.realpath(os.path.dirname(os.path.abspath(__file__))))
    rest = []
    for entry in sys.path:
        if not isinstance(entry, str):
            continue
        try:
            if os.path.realpath(entry or os.getcwd()) in skip:
                continue
        except Exception:
            continue
        rest.append(entry)
    # importlib.machinery and importlib.util are the frozen import system's PathFinder and
    # module_from_spec, already loaded; importing them costs warnings, contextlib and functools
    try:
        path_finder = sys.modules["_frozen_importlib_external"].PathFinder
        module_from_spec = sys.modules["_frozen_importlib"].module_from_spec
    except (KeyError, AttributeError):
        from importlib.machinery import PathFinder as path_finder
        from importlib.util import module_from_spec
    spec = path_finder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
        return None
    module = module_from_spec(spec)
    module._memscope_chain = skip
    return module


def _chain():
    try:
        module = _next_sitecustomize()
    except Exception:
        module = None
    if module is None:
        return
    # the user's module runs as sitecustomize and stays so: `import sitecustomize` gives theirs
    ours = sys.modules.get(__name__)
    sys.modules["sitecustomize"] = module
    try:
        module.__spec__.loader.exec_module(module)
    except BaseException:
        if ours is not None:
            sys.modules["sitecustomize"] = ours
        raise
    finally:
        try:
            del module._memscope_chain
        except Exception:
            pass


if os.environ.get("MEMSCOPE_RECORD_SPOOL"):
    try:
        _python_frames()
    except Exception:
        pass
try:
    _install()
except Exception:
    pass
_chain()
