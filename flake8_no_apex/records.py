"""`typing.NamedTuple`'s class syntax without importing typing, which a warm `check` (every
file's findings from the cache) never needs: loading it was a twentieth of that run.

The modules of the warm path write `class Reported(NamedTuple): ...` as usual and import
`NamedTuple` from here at run time (type checkers read typing's). The class made is what
typing makes: a `collections.namedtuple` of the annotated fields, their defaults and the
class's own methods and docstring, with the annotations kept as written (strings, under
`from __future__ import annotations`), never evaluated.
"""
from __future__ import annotations

from collections import namedtuple


class _NamedTupleMeta(type):
    def __new__(mcs, name, bases, namespace):
        if not bases:  # NamedTuple itself
            return super().__new__(mcs, name, bases, namespace)
        if bases != (NamedTuple,):
            raise TypeError("a NamedTuple has no other base classes")
        fields = list(namespace.get("__annotations__", {}))
        defaults = [namespace[field] for field in fields if field in namespace]
        if any(field not in namespace for field in fields[len(fields) - len(defaults):]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        made = namedtuple(name, fields, defaults=defaults, module=namespace["__module__"])
        made.__annotations__ = dict(namespace.get("__annotations__", {}))
        for key, value in namespace.items():
            if key not in fields and key not in ("__annotations__", "__module__"):
                setattr(made, key, value)
        return made


class NamedTuple(metaclass=_NamedTupleMeta):
    """The base to write a record class on (see the module's docstring)."""
