"""HLO attribute values: their grammar and typed values that print as canonical HLO.

An instruction's ``attributes`` map a key to either raw text, as parsed
(``'{0,3,2,1}'``: unknown attributes round-trip untouched), or a typed value
built by a compiler pass: ``String``, ``IntList``, ``Window`` (and ``Literal``
for a constant's payload). ``str()`` of a typed value is its canonical HLO
text, which is what the printer writes; parsing that text back gives an equal
value. The ``parse_*`` functions read raw text into the same typed values,
raising HloParseError when it is malformed.

The grammar rules take a ``Cursor`` (the module parser is one), so the module
parser and the standalone value parsers share them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...errors import InvalidValueError
from .cursor import Cursor
from .lexer import FLOAT, INT, NAME, STRING, WORD
from .literals import Literal, parse_literal

__all__ = ["IntList", "Literal", "String", "Window", "parse_int", "parse_int_list", "parse_literal", "parse_name",
           "parse_string", "parse_window", "skip_value"]

WINDOW_FIELDS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal")
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


# ----- typed values -------------------------------------------------------------------------------

@dataclass(frozen=True)
class String:
    """A quoted string attribute such as ``custom_call_target="ResizeNearest"``; ``value`` is unescaped."""

    value: str

    def __post_init__(self):
        if not isinstance(self.value, str):
            raise InvalidValueError(f"a String holds str, got {self.value!r}")

    def __str__(self) -> str:
        return '"' + "".join(_escape(char) for char in self.value) + '"'


def _escape(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    if char.isprintable():
        return char
    # Octal escapes of the UTF-8 bytes, always three digits so that a following digit is not swallowed.
    return "".join(f"\\{byte:03o}" for byte in char.encode("utf-8", errors="surrogatepass"))


class IntList(tuple):
    """A braced list of integers such as ``dimensions={0,3,2,1}``: a tuple of ints that prints as HLO."""

    def __new__(cls, values=()):
        values = tuple(values)
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in values):
            raise InvalidValueError(f"an IntList holds integers, got {values!r}")
        return super().__new__(cls, (int(v) for v in values))

    def __str__(self) -> str:
        return "{" + ",".join(map(str, self)) + "}"

    def __repr__(self) -> str:
        return f"IntList({tuple(self)!r})"


@dataclass(frozen=True)
class Window:
    """A window such as ``window={size=1x2x2x1 stride=1x2x2x1}``, one entry per dimension.

    Fields left as None take XLA's defaults (stride and dilations 1, pads
    (0, 0), no reversal). ``str()`` prints size and each field that differs
    from its default, as XLA does.
    """

    size: tuple[int, ...]
    stride: tuple[int, ...] | None = None
    pad: tuple[tuple[int, int], ...] | None = None
    lhs_dilate: tuple[int, ...] | None = None
    rhs_dilate: tuple[int, ...] | None = None
    rhs_reversal: tuple[bool, ...] | None = None

    def __post_init__(self):
        size = _ints("size", self.size, 0)
        rank = len(size)
        if rank == 0:
            raise InvalidValueError("a window has at least one dimension")
        values = {"size": size}
        for name in ("stride", "lhs_dilate", "rhs_dilate"):
            given = getattr(self, name)
            values[name] = (1,) * rank if given is None else _ints(name, given, 1)
        values["pad"] = ((0, 0),) * rank if self.pad is None else tuple(_ints("pad", p, None) for p in self.pad)
        if any(len(p) != 2 for p in values["pad"]):
            raise InvalidValueError(f"window pad is (lo, hi) per dimension, got {self.pad!r}")
        values["rhs_reversal"] = (False,) * rank if self.rhs_reversal is None else tuple(
            bool(v) for v in self.rhs_reversal)
        for name, value in values.items():
            if len(value) != rank:
                raise InvalidValueError(f"window {name} needs {rank} entries, as size has, got {value!r}")
            object.__setattr__(self, name, value)

    def __str__(self) -> str:
        rank = len(self.size)
        parts = [f"size={_x(self.size)}"]
        if self.stride != (1,) * rank:
            parts.append(f"stride={_x(self.stride)}")
        if self.pad != ((0, 0),) * rank:
            parts.append("pad=" + "x".join(f"{lo}_{hi}" for lo, hi in self.pad))
        if self.lhs_dilate != (1,) * rank:
            parts.append(f"lhs_dilate={_x(self.lhs_dilate)}")
        if self.rhs_dilate != (1,) * rank:
            parts.append(f"rhs_dilate={_x(self.rhs_dilate)}")
        if any(self.rhs_reversal):
            parts.append(f"rhs_reversal={_x(map(int, self.rhs_reversal))}")
        return "{" + " ".join(parts) + "}"


def _ints(name: str, values, minimum: int | None) -> tuple[int, ...]:
    values = tuple(values)
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in values) or (
            minimum is not None and any(v < minimum for v in values)):
        bound = "" if minimum is None else f" of at least {minimum}"
        raise InvalidValueError(f"window {name} needs integers{bound}, got {values!r}")
    return tuple(int(v) for v in values)


def _x(values) -> str:
    return "x".join(map(str, values))


# ----- parsing raw text ---------------------------------------------------------------------------

_PLAIN_INT_LIST = re.compile(r"\{ ?(?:-?[0-9]{1,20}(?: ?, ?-?[0-9]{1,20})*)? ?\}")

def parse_int(text: str) -> int:
    """An integer attribute value, e.g. ``index=1``."""
    return Cursor(text).whole(lambda c: c.int_value("an integer"))


def parse_int_list(text: str) -> IntList:
    """A braced integer list, e.g. ``dimensions={0,3,2,1}``."""
    if _PLAIN_INT_LIST.fullmatch(text):  # the common form, in one match; anything else token by token
        return IntList(map(int, text.strip("{} ").split(","))) if text.strip("{} ") else IntList()
    return Cursor(text).whole(int_list)


def parse_name(text: str) -> str:
    """A name, with or without '%', e.g. ``to_apply=%add.1``."""
    return Cursor(text).whole(lambda c: c.expect_kind(NAME, "a name").value)


def parse_string(text: str) -> str:
    """The unescaped value of a quoted string, e.g. ``backend_config="\\"00\\""`` gives '"00"'."""
    return Cursor(text).whole(string).value


def parse_window(text: str) -> Window:
    """A window spec ``{size=2x2 stride=2x2 pad=0_0x1_1 ...}``."""
    return Cursor(text).whole(window)


# ----- grammar rules ------------------------------------------------------------------------------

def skip_value(c: Cursor) -> None:
    """Any attribute value, checked only for balance: a string, word or balanced group, then any groups
    (e.g. a shape ``f32[2]{0}``). The caller keeps the tokens it passed over as raw text."""
    token = c.peek()
    if token.kind in (NAME, INT, FLOAT, WORD, STRING):
        c.advance()
    elif c.at_opener():
        c.group()
    else:
        c.fail(token, "an attribute value")
    while c.at_opener():
        c.group()


def string(c: Cursor) -> String:
    """A quoted string."""
    return String(c.expect_kind(STRING, "a quoted string").value)


def int_list(c: Cursor) -> IntList:
    """'{' [int (',' int)*] '}'"""
    c.expect("{", "'{' starting a list of integers")
    values = []
    if not c.at("}"):
        values.append(c.int_value("an integer"))
        while c.eat(","):
            values.append(c.int_value("an integer"))
    c.expect("}", "',' or '}' in the list")
    return IntList(values)


def window(c: Cursor) -> Window:
    """'{' (field '=' AxBx..)* '}' with size required; the other fields default per dimension."""
    c.expect("{", "'{' starting a window")
    fields: dict[str, tuple] = {}
    tokens = {}
    while not c.at("}"):
        key = c.expect_kind(NAME, f"a window field ({', '.join(WINDOW_FIELDS)}) or '}}'")
        if key.value not in WINDOW_FIELDS or key.value in fields:
            c.fail(key, f"a window field not given before ({', '.join(WINDOW_FIELDS)})")
        c.expect("=", f"'=' after {key.value}")
        tokens[key.value] = key
        fields[key.value] = _window_field(c, key.value)
    closer = c.expect("}")
    if "size" not in fields:
        c.fail(closer, "a size= field in the window")
    rank = len(fields["size"])
    for name, values in fields.items():
        if len(values) != rank:
            c.fail(tokens[name], f"{rank} entries in {name}=, as in size=", str(len(values)))
    return Window(**fields)


def _window_field(c: Cursor, name: str) -> tuple:
    """``2x2`` (or ``0_0x1_1`` for pad): one entry per window dimension."""
    token = c.peek()
    pattern, expected = {
        "pad": (r"-?\d{1,18}_-?\d{1,18}", "pads lo_hi per dimension, e.g. 0_0x1_1"),
        "size": (r"\d{1,18}", "sizes per dimension, e.g. 2x2"),
        "rhs_reversal": (r"[01]", "0 or 1 per dimension, e.g. 0x1"),
    }.get(name, (r"0*[1-9]\d{0,17}", f"positive {name} per dimension, e.g. 2x2"))
    if token.kind not in (INT, WORD) or not re.fullmatch(rf"(?:{pattern})(?:x(?:{pattern}))*", token.text):
        c.fail(token, expected)
    c.advance()
    parts = token.text.split("x")
    if name == "pad":
        return tuple(tuple(int(v) for v in part.split("_")) for part in parts)
    if name == "rhs_reversal":
        return tuple(part == "1" for part in parts)
    return tuple(int(part) for part in parts)
