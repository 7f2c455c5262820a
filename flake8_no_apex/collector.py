"""How this tool's own processes collect garbage (never flake8's, which is not ours to tune)."""
from __future__ import annotations

import gc
from contextlib import contextmanager

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import Iterator


def collect_less() -> None:
    """What is loaded by now is left out of collections, and they come every 50,000 allocations
    instead of 700 (mypy's remedy; cyclic garbage waits that much longer). Each analysis makes
    a tree of some 30 objects a line, all alive until it ends: at the default pace the collector
    traversed them, and every imported module, over and over: a tenth of a cold `check` of
    Lightning, a third of a keystroke's time in the language server. Called again once more is
    loaded (the engine, pygls), to leave that out too."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


@contextmanager
def paused() -> Iterator[None]:
    """No collection while one file is analysed: most of what it allocates is its tree, freed by
    reference counting once the analysis is dropped, so the collection that comes after it meets
    only what survived (its findings, its cycles), not the tree again at every pass."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
