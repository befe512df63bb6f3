# The fake torch's global optimizer step hooks, with torch >= 2.0's semantics: every subclass's
# step() is wrapped so that the global pre hooks run before it as hook(optimizer, args, kwargs)
# (a hook returning (args, kwargs) replaces them) and the global post hooks after it returns
# (not when it raises). With FAKE_TORCH_NO_GLOBAL_HOOKS set it is torch 1.13's instead: no global
# hooks, step() left as it is.
from collections import OrderedDict
import functools
import os

_NO_GLOBAL_HOOKS = bool(os.environ.get("FAKE_TORCH_NO_GLOBAL_HOOKS"))

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()
_next_id = [0]


class RemovableHandle(object):
    def __init__(self, hooks):
        self.hooks = hooks
        self.id = _next_id[0]
        _next_id[0] += 1

    def remove(self):
        self.hooks.pop(self.id, None)


def register_optimizer_step_pre_hook(hook):
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _hooked(step):
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for pre_hook in list(_global_optimizer_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError("a pre hook must return None or (args, kwargs)")
        out = step(self, *args, **kwargs)
        for post_hook in list(_global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    return wrapper


class Optimizer(object):
    def __init__(self, params, defaults=None):
        self.param_groups = [{"params": list(params)}]
        self.defaults = defaults or {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__ and not _NO_GLOBAL_HOOKS:
            cls.step = _hooked(cls.__dict__["step"])

    def step(self, closure=None):
        raise NotImplementedError


if _NO_GLOBAL_HOOKS:
    del register_optimizer_step_pre_hook, register_optimizer_step_post_hook
