"""Runs of a literal's sub-arrays found at once: where their element texts are, in C-speed passes.

A literal of millions of elements read token by token costs seconds; most
literals are plain, though: numbers, inf, nan, true/false, (re, im) pairs,
commas, braces, blanks and comments. ``take`` scans such a stretch with one
character-class match, lays its braces and commas (the *skeleton*) beside
the skeleton the shape calls for, and returns the element texts of the
whole sub-arrays that match, stripped, for the caller to convert. Anything
else (a comment the scan does not take, a stray character, a wrong count of
elements) ends the run there, and the token-by-token rule reads on and
reports it at its token. The run is only syntax; values are the caller's.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import numpy as np

ELEMENTS = 1 << 16  # elements one run takes at most: bounds its temporary lists
_WINDOW = 1 << 22  # characters one run scans at most
_BLANK = " \t\r\n\f\v"
# The characters of plain elements per kind (lower-case hex digits and 'x' for NaN payloads, 'E' for exponents).
_ELEMENT_CHARS = {"float": r"0-9a-fEinx.+\-()", "int": r"0-9\-", "pred": "aeflrstu01"}
_ELEMENT_CHARS.update(complex=_ELEMENT_CHARS["float"], uint=_ELEMENT_CHARS["int"])
_SCAN = {kind: re.compile(rf"(?:[{chars}{{}},{_BLANK}]+|//[^\n]*|(?=(?P<c>/\*[\s\S]*?\*/))(?P=c)){{0,256}}")
         for kind, chars in _ELEMENT_CHARS.items()}
_COMMENTS = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/")


def _table(chars: str) -> np.ndarray:
    table = np.zeros(256, bool)
    table[list(chars.encode())] = True
    return table


_IS_BLANK = _table(_BLANK)
_SEPARATORS = {"complex": _table("{},()")}  # what the skeleton is made of; the rest is element text or blanks
_PLAIN_SEPARATORS = _table("{},")
_TO_BLANK = {"complex": str.maketrans("{}(),", "     ")}  # separators to blanks: split() then gives the items
_PLAIN_TO_BLANK = str.maketrans("{},", "   ")


@dataclass(frozen=True)
class Run:
    """Whole sub-arrays found at once: their element texts (re and im in turn for complex), each one's end."""

    items: list[str]
    ends: np.ndarray  # source offset just after each sub-array (of the ',' or '}' that follows it)
    per_unit: int  # items per sub-array


@functools.lru_cache(maxsize=256)
def _skeleton(dims: tuple[int, ...], element: str) -> str:
    """The braces and commas of one sub-array of `dims` (``{,}`` for two elements), `element` per element."""
    text = element
    for size in reversed(dims):
        text = "{" + ",".join([text] * size) + "}"
    return text


def take(text: str, pos: int, kind: str, dims: tuple[int, ...], first: bool, count: int) -> Run | None:
    """Up to `count` whole sub-arrays of shape `dims` (elements when dims is ()) starting at `pos`, the first
    of their array when `first` (else each follows a ','); None when not even one is plain."""
    per_element = 2 if kind == "complex" else 1
    per_unit = math.prod(dims) * per_element
    if per_unit == 0 or per_unit > ELEMENTS:
        return None
    count = min(count, max(1, ELEMENTS // per_unit))
    scan = _SCAN[kind].match(text, pos, min(len(text), pos + min(_WINDOW, 64 + 32 * count * per_unit)))
    chunk = scan.group()
    if "/" in chunk:
        chunk = _COMMENTS.sub(lambda m: " " * len(m.group()), chunk)
    raw = np.frombuffer(chunk.encode("ascii"), np.uint8)
    is_separator = _SEPARATORS.get(kind, _PLAIN_SEPARATORS)[raw]
    separators = np.flatnonzero(is_separator)
    skeleton = raw[separators]

    # The sub-arrays whose skeleton matches, each followed by a ',' or '}'.
    unit = _skeleton(dims, "(,)" if kind == "complex" else "")
    head = len(unit) + (0 if first else 1)
    step = len(unit) + 1
    expected = np.frombuffer(((unit if first else "," + unit) + ("," + unit) * (count - 1)).encode(), np.uint8)
    n = min(len(skeleton), len(expected))
    differ = np.flatnonzero(skeleton[:n] != expected[:n])
    common = int(differ[0]) if len(differ) else n
    units = 0 if common < head else min(count, (common - head) // step + 1)
    last = head + (units - 1) * step  # skeleton index of what follows the last sub-array
    if units and not (last < len(skeleton) and skeleton[last] in b",}"):
        units -= 1
    if units == 0:
        return None

    # Element texts: the pieces between separators that the skeleton says are elements must hold one word
    # each (a run of non-blank characters), the other pieces none.
    stop = head + (units - 1) * step
    end = int(separators[stop])
    piece = np.cumsum(is_separator[:end])
    left = np.concatenate([np.frombuffer(b"{" if first else b"}", np.uint8), skeleton[:stop]])
    right = skeleton[: stop + 1]
    if kind == "complex":
        is_element = (left == ord("(")) | (right == ord(")"))
    else:
        is_element = ((left == ord("{")) | (left == ord(","))) & ((right == ord(",")) | (right == ord("}")))
    word = ~is_separator[:end] & ~_IS_BLANK[raw[:end]]
    word_starts = word & ~np.concatenate([[False], word[:-1]])
    words = np.bincount(piece[word_starts], minlength=stop + 1)
    wrong = words != is_element
    if wrong.any():  # keep the sub-arrays before the first piece that is not as it should be
        before = int(np.argmax(wrong))
        units = 0 if before <= head else min(units, (before - head - 1) // step + 1)
        if units == 0:
            return None
        stop = head + (units - 1) * step
    items = chunk[: separators[stop]].translate(_TO_BLANK.get(kind, _PLAIN_TO_BLANK)).split()
    ends = pos + separators[head + np.arange(units) * step]
    return Run(items, ends, per_unit)
