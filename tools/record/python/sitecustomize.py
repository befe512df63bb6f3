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
# step pre hook (torch >= 2.0), or, in a torch without it (1.13), wraps the step() of every
# torch.optim.Optimizer subclass, those defined later included: each step() of the first
# optimizer seen opens an mstx range named "step start" and the next one's closes it, the steps
# memscope-leaks(1) reads.  Once torch.profiler.profiler is imported, a torch.profiler.profile
# with a schedule (its ProfilerStep#N ranges) marks the steps while it runs instead: a range from
# the return of its start() or step() to the return of its next step() or stop().  The ranges
# come from the shim's exported functions, looked up in the process with ctypes; without the shim
# nothing is registered, and when torch has neither hook one line on stderr says so.  Then it
# runs the next sitecustomize on sys.path (the user's or the distribution's, such as Debian's
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

# the modules whose import completes a registration (_TARGETS, at the end), torch 2.x's global
# optimizer step pre hook registrar
_OPTIMIZER = "torch.optim.optimizer"
_PROFILER = "torch.profiler.profiler"
_PRE = "register_optimizer_step_pre_hook"
_STEP_NAME = b"step start"
_NO_HOOK = "memscope-record: no PyTorch step hook installed: %s\n"


class _Steps(object):
    """One training step per step() of the first optimizer seen (several optimizers stepping in
    one iteration make one step), from its start to the start of the next, so that a step holds
    a whole iteration (the forward and backward passes after its optimizer step); the last one
    has no end (exit is no iteration's end). While a torch profiler with a schedule runs, its
    steps (from one ProfilerStep#N to the next) are the steps instead."""

    def __init__(self, start, end):
        self.start = start  # memscope_record_range_start(text) -> id, 0 when not recording
        self.end = end  # memscope_record_range_end(id)
        self.key = None  # weakref to the optimizer whose steps are the steps
        self.open = 0  # id of the open step's range, 0 for none
        self.profiling = 0  # profilers with a schedule running: they mark the steps

    def close(self):
        """The open step ends."""
        try:
            if self.open:
                rid, self.open = self.open, 0
                self.end(rid)
        except Exception:
            pass

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
            if not self.profiling and self._mine(optimizer):
                self.close()
                self.open = self.start(_STEP_NAME)
        except Exception:
            pass
        return None

    def profiler(self, prof, what):
        """A torch profiler's start() or step() ("begin") or stop() ("stop") returned: the step
        open ends, and with "begin" the next starts. After the call, not before: the
        ProfilerStep#N record the call makes then belongs to the step it ends, and is freed in
        the next call, inside the step it opens (before it, it would be a block of each step
        alive at the end of the next)."""
        try:
            if not getattr(prof, "record_steps", False):
                return  # no schedule: the profiler has no steps
            self.close()  # the optimizer's step, or the profiler's last
            running = getattr(prof, "_memscope_running", False)
            if what == "begin":
                if not running:
                    prof._memscope_running = True
                    self.profiling += 1
                self.open = self.start(_STEP_NAME)
            elif running:
                prof._memscope_running = False
                self.profiling -= 1
        except Exception:
            pass


_STATE = {}  # "steps": the process's _Steps once the shim's functions were found


def _steps():
    """The process's one _Steps, made at the first call; None without the shim's functions."""
    if "steps" in _STATE:
        return _STATE["steps"]
    import ctypes  # torch has imported it already: free here

    lib = ctypes.CDLL(None)
    start = getattr(lib, "memscope_record_range_start", None)
    end = getattr(lib, "memscope_record_range_end", None)
    steps = None
    if start is not None and end is not None:
        start.restype = ctypes.c_uint64
        start.argtypes = [ctypes.c_char_p]
        end.restype = None
        end.argtypes = [ctypes.c_uint64]
        steps = _Steps(start, end)
    _STATE["steps"] = steps
    return steps


def _wrap_step(cls, steps, active):
    """cls's own step(), when it has one, wrapped once: the outermost step() of an optimizer (a
    subclass's step calling its base's is one) runs after steps.pre."""
    import functools
    import types

    fn = cls.__dict__.get("step")
    if not isinstance(fn, types.FunctionType) or getattr(fn, "_memscope_step", False):
        return

    @functools.wraps(fn)  # keeps torch 1.13's "hooked" mark, when fn is its profiling wrapper
    def step(self, *args, **kwargs):
        key = id(self)
        if key in active:
            return fn(self, *args, **kwargs)
        steps.pre(self, args, kwargs)
        active.add(key)
        try:
            return fn(self, *args, **kwargs)
        finally:
            active.discard(key)

    step._memscope_step = True
    cls.step = step


def _wrap_optimizers(base, steps):
    """torch without the global hooks: the step() of every subclass of base wrapped at the class
    level, those there are now and those defined later (base's __init_subclass__)."""
    active = set()
    prev = base.__dict__.get("__init_subclass__")

    def init_subclass(cls, **kwargs):
        if prev is not None:
            prev.__get__(None, cls)(**kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        try:
            _wrap_step(cls, steps, active)
        except Exception:
            pass

    base.__init_subclass__ = classmethod(init_subclass)
    todo, seen = list(base.__subclasses__()), set()
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.add(cls)
            _wrap_step(cls, steps, active)
            todo.extend(cls.__subclasses__())


def _register_optimizer(module):
    """Called once torch.optim.optimizer has run: torch's global step pre hook registered, else
    every optimizer's step() wrapped, when the shim is there; one stderr line when neither
    could be."""
    steps = _steps()
    if steps is None:
        return  # not recorded by the shim: nothing to mark
    pre = getattr(module, _PRE, None)
    if callable(pre):
        pre(steps.pre)
        return
    base = getattr(module, "Optimizer", None)
    if not isinstance(base, type):
        why = "%s has neither %s nor an Optimizer class" % (_OPTIMIZER, _PRE)
        sys.stderr.write(_NO_HOOK % why)
        return
    try:
        _wrap_optimizers(base, steps)
    except Exception as e:
        sys.stderr.write(_NO_HOOK % ("wrapping %s.Optimizer.step failed: %r" % (_OPTIMIZER, e)))


def _register_profiler(module):
    """Called once torch.profiler.profiler has run: profile's start, step and stop wrapped so
    that the ProfilerStep#N ranges of a profiler with a schedule are the steps while it runs."""
    import functools

    cls = getattr(module, "profile", None)
    steps = _steps()
    if not isinstance(cls, type) or steps is None:
        return
    for name in ("start", "step", "stop"):
        fn = cls.__dict__.get(name)
        if not callable(fn) or getattr(fn, "_memscope_step", False):
            continue

        def method(self, *args, _fn=fn, _what="stop" if name == "stop" else "begin", **kwargs):
            out = _fn(self, *args, **kwargs)
            steps.profiler(self, _what)
            return out

        method = functools.wraps(fn)(method)
        method._memscope_step = True
        setattr(cls, name, method)


_TARGETS = {_OPTIMIZER: _register_optimizer, _PROFILER: _register_profiler}


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
        if fullname not in _TARGETS or self.busy:
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
        # every run of a module registers on its own, fresh, hook tables or classes
        try:
            _TARGETS[module.__name__](module)
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
    for name in _TARGETS:
        module = sys.modules.get(name)
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
