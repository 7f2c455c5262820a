"""Run rule examples on the real libraries and record what they do.

An example runs as a module: its rule's prelude (the free names it uses: a model, an optimizer,
a trainer) is executed first, the example after it, then the epilogue that exercises what the
example only defines (a hook Lightning calls during `fit`). What is recorded is what a user would
see: the exception, the warnings, and the observable state a fix must keep.
"""
from __future__ import annotations

import contextlib
import os
import inspect
import io
import logging
import re
import warnings
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple, Type

import torch


@dataclass(frozen=True)
class Raises:
    """The example fails: `error` (or a subclass) whose text matches `text`."""

    error: Type[BaseException]
    text: str


@dataclass(frozen=True)
class Warns:
    """The example runs and warns: a warning whose category is named `category` (or derives from
    it) and whose text matches `text`."""

    category: str
    text: str

    def matches(self, warning: warnings.WarningMessage) -> bool:
        names = {cls.__name__ for cls in warning.category.__mro__}
        return self.category in names and re.search(self.text, str(warning.message)) is not None


SILENT = None  # the example runs without the rule's warning: a legacy spelling, an import


@dataclass
class Outcome:
    error: Optional[BaseException]
    warnings: List[warnings.WarningMessage]
    namespace: Dict[str, object]
    entered_autocasts: List[Tuple[str, object, bool, bool]] = field(default_factory=list)
    grad_scalers: List[Tuple[object, Dict[str, object]]] = field(default_factory=list)  # with their arguments
    scaler_calls: List[Tuple[str, int]] = field(default_factory=list)  # (step, unscale_ or update; id(optimizer))

    def warned(self, expected: Warns) -> bool:
        return any(expected.matches(w) for w in self.warnings)

    def describe(self) -> str:
        shown = [f"{w.category.__name__}: {w.message}" for w in self.warnings]
        return f"error={self.error!r}, warnings={shown}"


class _Recorder:
    """Records every autocast entered and every GradScaler constructed, whichever public class
    (old or new) the program used: both derive from torch.amp's, and the old ones call its
    `__init__` with the device they stand for. A scaler records the arguments torch.amp's
    `__init__` received, defaults applied: a CUDA scaler on a machine without CUDA disables
    itself and forgets them."""

    def __init__(self) -> None:
        self.autocasts: List[Tuple[str, object, bool, bool]] = []
        self.scalers: List[Tuple[object, Dict[str, object]]] = []
        self.calls: List[Tuple[str, int]] = []

    @contextlib.contextmanager
    def installed(self):
        autocast, scaler = torch.amp.autocast_mode.autocast, torch.amp.grad_scaler.GradScaler
        enter, init = autocast.__enter__, scaler.__init__
        recorder = self

        def recording_enter(self):
            result = enter(self)
            recorder.autocasts.append((self.device, self.fast_dtype, self._enabled, self._cache_enabled))
            return result

        def recording_init(self, *args, **kwargs):
            init(self, *args, **kwargs)
            bound = inspect.signature(init).bind(self, *args, **kwargs)
            bound.apply_defaults()
            recorder.scalers.append((self, {k: v for k, v in bound.arguments.items() if k != "self"}))

        def recording(method):
            original = getattr(scaler, method)

            def call(self, *args, **kwargs):
                recorder.calls.append((method, id(args[0]) if args else 0))
                return original(self, *args, **kwargs)
            return original, call

        methods = {method: recording(method) for method in ("step", "unscale_", "update")}
        autocast.__enter__, scaler.__init__ = recording_enter, recording_init
        for method, (_, call) in methods.items():
            setattr(scaler, method, call)
        try:
            yield self
        finally:
            autocast.__enter__, scaler.__init__ = enter, init
            for method, (original, _) in methods.items():
                setattr(scaler, method, original)


def run(program: str, prelude: str = "", epilogue: str = "", name: str = "example") -> Outcome:
    """Execute prelude + program + epilogue in a fresh namespace, quietly. torch's warnings that
    come once per process (`torch.set_default_tensor_type`'s) come every time, and the process-wide
    defaults an example may set (the default dtype, the working directory, PATH) are put back after it."""
    namespace: Dict[str, object] = {"__name__": f"conformance_{name}"}
    error = None
    saved = torch.get_default_dtype(), torch.is_warn_always_enabled(), os.getcwd(), os.environ.get("PATH", "")
    logging.disable(logging.CRITICAL)
    with warnings.catch_warnings(record=True) as caught, _Recorder().installed() as recorder, \
            contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("always")
        torch.set_warn_always(True)
        try:
            for part, text in (("prelude", prelude), (name, program), ("epilogue", epilogue)):
                exec(compile(text, f"<{part}>", "exec"), namespace)
        except Exception as raised:  # what the example does is the result
            error = raised
        finally:
            torch.set_default_dtype(saved[0])
            torch.set_warn_always(saved[1])
            os.chdir(saved[2])
            os.environ["PATH"] = saved[3]
    logging.disable(logging.NOTSET)
    return Outcome(error, list(caught), namespace, recorder.autocasts, recorder.scalers, recorder.calls)


def scaler_state(recorded: Tuple[object, Dict[str, object]]) -> tuple:
    """What a GradScaler does: its configuration, its device, whether it scales, its state."""
    scaler, arguments = recorded
    return (sorted(arguments.items()), scaler._device, scaler.is_enabled(), sorted(scaler.state_dict().items()))


Observe = Callable[[Outcome], object]


def default_observation(outcome: Outcome) -> object:
    """The AMP state every torch rule must keep: autocasts entered and scalers built."""
    return outcome.entered_autocasts, [scaler_state(s) for s in outcome.grad_scalers]
