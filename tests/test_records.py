"""records.NamedTuple, which the warm path's record classes are written on instead of
typing's (a warm `check` never loads typing), makes what typing.NamedTuple makes."""
import pickle
import typing

import pytest

from flake8_no_apex import records
from flake8_no_apex.files import Candidate, Decoded
from flake8_no_apex.inputs import CellLine
from flake8_no_apex.report import Reported
from flake8_no_apex.targets import Declaration, Targets

BODY = '''
class Row(Base):
    """A row."""

    path: str
    line: int
    edits: "Sequence[str]" = ()
    cell: "Optional[int]" = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def where(self) -> tuple:
        return (self.path, self.line)
'''


def _made(base) -> type:
    namespace = {"Base": base, "__name__": "made_here"}
    exec(BODY, namespace)
    return namespace["Row"]


def test_a_class_on_it_is_the_one_typing_makes():
    ours, typings = _made(records.NamedTuple), _made(typing.NamedTuple)
    assert ours._fields == typings._fields and ours._field_defaults == typings._field_defaults
    assert ours.__doc__ == typings.__doc__ == "A row." and ours.__module__ == typings.__module__ == "made_here"
    assert ours.__mro__[1:] == (tuple, object) and not hasattr(ours("a", 1), "__dict__")
    for made in (ours, typings):
        row = made("a.py", 3)
        assert (str(row), row.where, tuple(row)) == ("a.py:3", ("a.py", 3), ("a.py", 3, (), None))
        assert row._replace(cell=2) == ("a.py", 3, (), 2) and row._asdict()["edits"] == ()
        assert repr(row) == "Row(path='a.py', line=3, edits=(), cell=None)"
    assert list(ours.__annotations__) == ["path", "line", "edits", "cell"]


def test_a_field_without_a_default_after_one_with_a_default_is_refused_as_typing_does():
    body = "class Row(Base):\n    a: int = 0\n    b: int\n"
    for base in (records.NamedTuple, typing.NamedTuple):
        with pytest.raises(TypeError):
            exec(body, {"Base": base})


@pytest.mark.parametrize("record", [Reported, Candidate, Decoded, CellLine, Declaration, Targets])
def test_the_records_of_the_warm_path_pickle_for_the_worker_processes(record):
    """`check -j` sends candidates and findings between processes."""
    values = [f"v{i}" for i in range(len(record._fields) - len(record._field_defaults))]
    made = record(*values)
    assert type(made) is record and pickle.loads(pickle.dumps(made)) == made


# --- records.dataclass, which the package's dataclasses are made with --------------------------
DATA_BODY = '''
class Plain:
    """A mutable record."""

    text: str
    count: int = 0
    items: "List[int]" = field(default_factory=list)
    hidden: "Optional[object]" = field(default=None, repr=False)
    memo: "Dict[str, int]" = field(default_factory=dict, init=False, repr=False)
    later: "Optional[str]" = field(default=None, init=False)

    def total(self) -> int:
        return self.count + len(self.items)

    @cached_property
    def shout(self) -> str:
        return self.text.upper()


@dataclass(frozen=True)
class Frozen:
    path: str
    named: bool = False
    kind: "Optional[str]" = None


@dataclass(frozen=True)
class Same:  # Frozen's fields under another name: never equal to a Frozen
    path: str
    named: bool = False
    kind: "Optional[str]" = None


@dataclass
class Own:
    value: int

    def __eq__(self, other):
        return True

    def __repr__(self):
        return "mine"
'''


def _data(module) -> dict:
    from functools import cached_property

    namespace = {"dataclass": module.dataclass, "field": module.field, "cached_property": cached_property,
                 "__name__": __name__}
    exec(DATA_BODY.replace("class Plain:", "@dataclass\nclass Plain:"), namespace)
    return namespace


def test_a_dataclass_made_here_behaves_as_the_standard_one():
    import dataclasses

    ours, standard = _data(records), _data(dataclasses)
    for made in (ours, standard):
        plain = made["Plain"]
        a, b = plain("x"), plain("x", 2, [1])
        assert (a.count, a.items, a.hidden, a.memo, a.later, b.total(), a.shout) == (0, [], None, {}, None, 3, "X")
        assert plain("y").items is not plain("y").items and plain("y").memo is not plain("y").memo
        assert repr(b) == "Plain(text='x', count=2, items=[1], later=None)"
        assert plain("x") == plain("x") and plain("x") != plain("x", 1) and plain("x") != ("x",)
        assert plain.__hash__ is None and plain.__doc__ == "A mutable record."
        assert plain.total.__qualname__ == "Plain.total" and plain.__init__.__qualname__ == "Plain.__init__"
        assert plain.__match_args__ == ("text", "count", "items", "hidden")
        assert plain.count == 0 and plain.hidden is None and "items" not in plain.__dict__  # class attributes
        with pytest.raises(TypeError):
            plain("x", memo={})
        with pytest.raises(TypeError):
            plain()
        frozen, same = made["Frozen"], made["Same"]
        f = frozen("a.py", kind="python")
        assert repr(f) == "Frozen(path='a.py', named=False, kind='python')"
        assert hash(f) == hash(frozen("a.py", False, "python")) and f != same("a.py", kind="python")
        assert {f: 1}[frozen("a.py", kind="python")] == 1
        for change in (lambda: setattr(f, "path", "b.py"), lambda: delattr(f, "kind"), lambda: setattr(f, "new", 1)):
            with pytest.raises(AttributeError, match="cannot (assign to|delete) field"):
                change()
        own = made["Own"]
        assert own(1) == own(2) and repr(own(1)) == "mine" and own.__hash__ is None
    assert issubclass(records.FrozenInstanceError, AttributeError)


def test_replace_and_asdict_do_what_the_standard_ones_do():
    import dataclasses

    for module, made in ((records, _data(records)), (dataclasses, _data(dataclasses))):
        plain, frozen = made["Plain"], made["Frozen"]
        before = plain("x", 1, [2])
        before.memo["k"] = 1
        after = module.replace(before, count=5)
        assert (after.text, after.count, after.items, after.memo) == ("x", 5, [2], {})  # init=False: made afresh
        assert module.replace(frozen("a.py"), named=True) == frozen("a.py", True)
        with pytest.raises((ValueError, TypeError)):  # (Python 3.13's raises TypeError)
            module.replace(before, memo={})
        as_dict = module.asdict(before)
        assert as_dict == {"text": "x", "count": 1, "items": [2], "hidden": None, "memo": {"k": 1}, "later": None}
        assert as_dict["items"] is not before.items


def test_the_options_a_dataclass_cannot_take_are_refused_as_the_standard_module_refuses_them():
    import dataclasses

    for module in (records, dataclasses):
        with pytest.raises(TypeError):
            exec("@dataclass\nclass Row:\n    a: int = 0\n    b: int\n", {"dataclass": module.dataclass})
        with pytest.raises(ValueError):
            module.field(default=1, default_factory=list)
        with pytest.raises(TypeError):
            exec("@dataclass(frozen=True)\nclass Row:\n    a: int\n    def __setattr__(self, n, v): pass\n",
                 {"dataclass": module.dataclass})


def _package_dataclasses():
    import importlib
    import pkgutil

    import flake8_no_apex

    found = []
    for info in pkgutil.walk_packages(flake8_no_apex.__path__, "flake8_no_apex."):
        if info.name.endswith(("server", "watch", "__main__")):  # (need the server's extra, or run)
            continue
        module = importlib.import_module(info.name)
        found += [value for value in vars(module).values()
                  if isinstance(value, type) and value.__module__ == info.name and "__record_fields__" in vars(value)]
    return found


@pytest.mark.parametrize("made", _package_dataclasses(), ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_each_dataclass_of_the_package_takes_the_arguments_the_standard_one_would(made):
    """The same class, made by `dataclasses` from the same annotations and fields: the same
    parameters, defaults and fields shown."""
    import dataclasses
    import inspect

    missing = dataclasses.MISSING
    namespace = {name: dataclasses.field(default=missing if f.default is records._MISSING else f.default,
                                         default_factory=missing if f.default_factory is records._MISSING
                                         else f.default_factory, init=f.init, repr=f.repr)
                 for name, f in made.__record_fields__}
    frozen = "__setattr__" in vars(made)
    bare = type(made.__name__, (), {"__annotations__": made.__annotations__, **namespace})
    standard = dataclasses.dataclass(frozen=frozen)(bare)

    def parameters(cls):
        return [(p.name, repr(p.default)) for p in inspect.signature(cls.__init__).parameters.values()]

    assert parameters(made) == parameters(standard)
    assert [f.name for f in dataclasses.fields(standard) if f.repr] == [n for n, f in made.__record_fields__ if f.repr]
    assert standard.__match_args__ == made.__match_args__
