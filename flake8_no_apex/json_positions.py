"""Where the members of a JSON object and the items of an array are in the text, so a notebook's
cell or a config's key can be reported at its line, and one value replaced with every other byte
of the file as it was. The json module decodes; this only walks the top levels and skips the
rest with it."""
from __future__ import annotations

import json
import re
from json.decoder import scanstring
from typing import TYPE_CHECKING, List, Tuple

if TYPE_CHECKING:
    from typing import NamedTuple
else:  # typing's class syntax, without its compile of every field's annotation (records.py)
    from .records import NamedTuple

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class Member(NamedTuple):
    key: str
    key_start: int  # the opening quote of the key
    value: object  # decoded
    start: int  # the value's text is text[start:end]
    end: int


def _skip(text: str, i: int) -> int:
    return _SPACE.match(text, i).end()


def _expect(text: str, i: int, char: str) -> int:
    if not text.startswith(char, i):
        raise ValueError(f"expected {char!r} at offset {i}")
    return i + 1


def members(text: str, start: int) -> List[Member]:
    """The members of the object whose `{` is at (or after blanks from) `start`."""
    i = _expect(text, _skip(text, start), "{")
    found: List[Member] = []
    i = _skip(text, i)
    if text.startswith("}", i):
        return found
    while True:
        key_start = _skip(text, i)
        key, i = scanstring(text, _expect(text, key_start, '"'))
        i = _skip(text, _expect(text, _skip(text, i), ":"))
        value, end = _DECODER.raw_decode(text, i)
        found.append(Member(key, key_start, value, i, end))
        i = _skip(text, end)
        if text.startswith("}", i):
            return found
        i = _expect(text, i, ",")


def items(text: str, start: int) -> List[Tuple[int, int]]:
    """(start, end) of each item of the array whose `[` is at (or after blanks from) `start`."""
    i = _skip(text, _expect(text, _skip(text, start), "["))
    found: List[Tuple[int, int]] = []
    if text.startswith("]", i):
        return found
    while True:
        i = _skip(text, i)
        _, end = _DECODER.raw_decode(text, i)
        found.append((i, end))
        i = _skip(text, end)
        if text.startswith("]", i):
            return found
        i = _expect(text, i, ",")


def encode_like(old: str, value: object) -> str:
    """`value` (a string or a list of strings) as JSON laid out as `old`, the text it replaces:
    one item per line with the same indentation, or on one line; non-ASCII escaped only if
    `old` escaped it (nbformat writes it as it is)."""
    ascii_only = bool(re.search(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])", old))

    def dump(item: object) -> str:
        return json.dumps(item, ensure_ascii=ascii_only)

    if not isinstance(value, list):
        return dump(value)
    if not value:
        return "[]"
    inner = old[1:-1]
    if "\n" not in inner:
        separator = ", " if ", " in inner or not inner.strip() else ","
        return "[" + separator.join(dump(item) for item in value) + "]"
    lead = inner[:len(inner) - len(inner.lstrip())]  # the line break and indentation before an item
    tail = inner[len(inner.rstrip()):]  # before the closing bracket
    return "[" + lead + ("," + lead).join(dump(item) for item in value) + tail + "]"
