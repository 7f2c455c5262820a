"""Record classes made without the standard modules' costs at import, for the modules of a
cold or warm `check`.

`NamedTuple`: `typing.NamedTuple`'s class syntax without importing typing, which a warm
`check` (every file's findings from the cache) never needs: loading it was a twentieth of that
run. The modules of the warm path write `class Reported(NamedTuple): ...` as usual and import
`NamedTuple` from here at run time (type checkers read typing's). The class made is what
typing makes: a `collections.namedtuple` of the annotated fields, their defaults and the
class's own methods and docstring, with the annotations kept as written (strings, under
`from __future__ import annotations`), never evaluated.

`dataclass`, `field`, `replace` and `asdict`: `dataclasses`' (type checkers read those), for
the options this package uses. The standard decorator compiles each method it makes on its own
(about 0.15 ms each) and its module imports `inspect`, with `dis`: the 15 dataclasses a cold
`check` loads cost it about 13 ms, 4% of its instructions. This one makes the same methods
(`__init__`, `__repr__`, `__eq__`; for a frozen class `__hash__`, `__setattr__` and
`__delattr__` too) from one text per class. tests/test_records.py compares the two.
"""
from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False  # typing's flag: a warm run never loads typing (CONTRIBUTING)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple, TypeVar

    T = TypeVar("T")


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


# --- dataclasses ------------------------------------------------------------------------------
_MISSING = object()


class _Factory:
    """The default `__init__` shows for a field with a factory, as the standard one's."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


class Field:
    """A field's options, as `dataclasses.field` takes them."""

    __slots__ = ("default", "default_factory", "init", "repr")

    def __init__(self, default: object, default_factory: object, init: bool, repr: bool):
        self.default, self.default_factory, self.init, self.repr = default, default_factory, init, repr


def field(*, default: object = _MISSING, default_factory: object = _MISSING, init: bool = True,
          repr: bool = True) -> "Any":
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, init, repr)


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen dataclass."""


def dataclass(cls: "Optional[type]" = None, *, frozen: bool = False) -> "Any":
    """The class with the methods `dataclasses.dataclass(cls, frozen=frozen)` gives it."""
    if cls is None:
        return lambda cls: _made(cls, frozen)
    return _made(cls, frozen)


def _made(cls: type, frozen: bool) -> type:
    fields: "List[Tuple[str, Field]]" = []
    for name in cls.__dict__.get("__annotations__", {}):
        value = cls.__dict__.get(name, _MISSING)
        if isinstance(value, Field):
            if value.default is _MISSING:
                delattr(cls, name)  # a field with a factory (or no default) is no class attribute
            else:
                setattr(cls, name, value.default)
            fields.append((name, value))
        else:
            fields.append((name, Field(value, _MISSING, True, True)))
    given = [(name, f) for name, f in fields if f.init]
    defaulted = False
    for name, f in given:
        if f.default is _MISSING and f.default_factory is _MISSING:
            if defaulted:
                raise TypeError(f"non-default argument {name!r} follows default argument")
        else:
            defaulted = True
    names = {"_factory_marker": _FACTORY, "_frozen_error": FrozenInstanceError, "_object_setattr": object.__setattr__,
             "_cls": cls}
    parameters, body = [], []
    for name, f in fields:
        if f.default_factory is not _MISSING:
            names[f"_factory_{name}"] = f.default_factory
            if f.init:
                parameters.append(f"{name}=_factory_marker")
                value = f"_factory_{name}() if {name} is _factory_marker else {name}"
            else:
                value = f"_factory_{name}()"
        elif f.init:
            parameters.append(name if f.default is _MISSING else f"{name}=_default_{name}")
            value = name
        elif f.default is not _MISSING:
            value = f"_default_{name}"
        else:
            continue  # neither given nor defaulted: unset, as dataclasses leaves it
        if f.default is not _MISSING:
            names[f"_default_{name}"] = f.default
        body.append(f"  _object_setattr(self, {name!r}, {value})" if frozen else f"  self.{name} = {value}")
    every = tuple(name for name, _ in fields)
    shown = ", ".join(f"{name}={{self.{name}!r}}" for name, f in fields if f.repr)
    compared = "".join(f"self.{name}," for name in every)
    other = "".join(f"other.{name}," for name in every)
    lines = [f"def __init__(self, {', '.join(parameters)}):", *(body or ["  pass"]),
             "def __repr__(self):", f"  return f'{{self.__class__.__qualname__}}({shown})'",
             "def __eq__(self, other):",
             f"  return ({compared}) == ({other}) if other.__class__ is self.__class__ else NotImplemented"]
    if frozen:
        guard = f"  if type(self) is _cls or name in {every!r}: raise _frozen_error"
        lines += ["def __hash__(self):", f"  return hash(({compared}))",
                  "def __setattr__(self, name, value):", guard + "(f'cannot assign to field {name!r}')",
                  "  super(_cls, self).__setattr__(name, value)",
                  "def __delattr__(self, name):", guard + "(f'cannot delete field {name!r}')",
                  "  super(_cls, self).__delattr__(name)"]
    exec("\n".join(lines), names)  # noqa: S102 (a text made above from the class's field names)
    own_hash = cls.__dict__.get("__hash__", _MISSING)  # (a class that writes `__eq__` has None here)
    hashed = not (own_hash is _MISSING or own_hash is None and "__eq__" in cls.__dict__)
    for method in ("__init__", "__repr__", "__eq__"):
        if method not in cls.__dict__:  # the class's own is kept, as dataclasses keeps it
            _set_method(cls, method, names[method])
    if not hashed:
        if frozen:
            _set_method(cls, "__hash__", names["__hash__"])
        else:
            cls.__hash__ = None  # type: ignore[assignment]  # compared by value, yet mutable: unhashable
    if frozen:
        for method in ("__setattr__", "__delattr__"):
            if method in cls.__dict__:
                raise TypeError(f"cannot overwrite attribute {method} in class {cls.__name__}")
            _set_method(cls, method, names[method])
    cls.__match_args__ = tuple(name for name, _ in given)  # type: ignore[attr-defined]
    cls.__record_fields__ = tuple(fields)  # type: ignore[attr-defined]
    return cls


def _set_method(cls: type, name: str, function: "Any") -> None:
    function.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, function)


def replace(instance: "T", **changes: object) -> "T":
    """`dataclasses.replace`: a new instance with the changed fields, the others as they are."""
    for name, options in instance.__record_fields__:  # type: ignore[attr-defined]
        if not options.init:
            if name in changes:
                raise ValueError(f"field {name} is declared with init=False, it cannot be specified with replace()")
        elif name not in changes:
            changes[name] = getattr(instance, name)
    return instance.__class__(**changes)


def asdict(instance: object) -> "Dict[str, object]":
    """`dataclasses.asdict` for a dataclass whose fields hold strings, numbers and lists or dicts
    of them (migration's outcomes): its fields, with lists and dicts copied."""
    fields = instance.__record_fields__  # type: ignore[attr-defined]
    return {name: _copied(getattr(instance, name)) for name, _ in fields}


def _copied(value: object) -> object:
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    return value
