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
