import functools

import torch

class autocast:
    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        # None: the thread's state when the object is made (an outer autocast's, set_autocast_dtype's)
        self.fast_dtype = torch.get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = enabled
        self._cache_enabled = torch.is_autocast_cache_enabled() if cache_enabled is None else cache_enabled

    def _record(self):
        torch.CALLS.append(("autocast", self.device, self.fast_dtype, self._enabled, self._cache_enabled))

    def __enter__(self):
        self._record()
        self.prev = (torch.get_autocast_dtype(self.device), torch.is_autocast_cache_enabled())
        torch.set_autocast_dtype(self.device, self.fast_dtype)
        torch.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc):
        torch.set_autocast_dtype(self.device, self.prev[0])
        torch.set_autocast_cache_enabled(self.prev[1])
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def decorated(*args, **kwargs):
            with self:
                return function(*args, **kwargs)
        return decorated


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    torch.CALLS.append(("custom_fwd", device_type, cast_inputs))
    return fwd


def custom_bwd(bwd=None, *, device_type):
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    torch.CALLS.append(("custom_bwd", device_type))
    return bwd
