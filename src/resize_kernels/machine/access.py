"""Access patterns: how an instruction walks a tensor's storage.

``AccessPattern(tensor, pattern=[[step, num], ...], offset)`` addresses element
(i, j, ...) at flat position ``offset + i*step0 + j*step1 + ...`` of the tensor's
storage (counts and steps in elements). On an SBUF tile the storage is the tile
flattened as (partitions, free_size), so the first pair walks partitions with a
step that is a multiple of the tile's free size. With ``vector_offset`` (an
int32 (P, 1) SBUF tile) and ``indirect_dim=0``, row i starts at
``offset + vector_offset[i] * row_size`` and step0 is ignored: the gather.
A direct pattern may step backwards (a negative step, as NKI's ``1 - i`` index
expressions need) on any pair but an SBUF tile's partitions; a gather's steps
are non-negative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import InvalidValueError
from .errors import OutOfBoundsError
from .memory import HbmTensor, SbufTile


@dataclass(frozen=True, eq=False, init=False, slots=True)
class AccessPattern:
    tensor: HbmTensor | SbufTile
    pattern: tuple  # ((step, num), ...)
    offset: int = 0
    vector_offset: "AccessPattern | None" = None
    indirect_dim: int | None = None
    row_size: int = 0  # elements per indexed row of a gather
    # Computed once, as they are read on every use. Slots, not an instance __dict__: a trace holds a pattern or
    # more per instruction, and a dict each outweighs the pattern's own data.
    shape: tuple = field(init=False, repr=False)
    is_sbuf: bool = field(init=False, repr=False)
    _in_bounds: bool = field(init=False, repr=False)  # set by check_static

    def __init__(self, tensor, pattern, offset=0, vector_offset=None, indirect_dim=None, row_size=0):
        """Set the fields (through object.__setattr__: the dataclass is frozen), then check them."""
        if _valid_int_pairs(pattern):  # as kernels and the tracer build patterns: one shared copy of each
            known = _KNOWN.get(pattern)
            if known is None:
                if len(_KNOWN) >= _KNOWN_MAX:
                    _KNOWN.clear()
                known = _KNOWN[pattern] = (pattern, tuple([n for _, n in pattern]))
            pattern, shape = known
        else:  # the general path: convert, then check (and say what is wrong)
            pattern = tuple((int(s), int(n)) for s, n in pattern)
            if not pattern:
                raise InvalidValueError(f"an access pattern on {tensor.name!r} needs at least one [step, num] pair")
            for k, (step, num) in enumerate(pattern):
                backwards_ok = indirect_dim is None and not (k == 0 and isinstance(tensor, SbufTile))
                if num < 1 or (step < 0 and not backwards_ok):
                    raise InvalidValueError(f"access pattern on {tensor.name!r} requires num >= 1 in every "
                                            f"[step, num] pair and step >= 0 on a gather's pairs and on SBUF "
                                            f"partitions, got {[list(p) for p in pattern]}")
            shape = tuple([n for _, n in pattern])
        is_sbuf = isinstance(tensor, SbufTile)
        _set(self, "tensor", tensor)
        _set(self, "pattern", pattern)
        _set(self, "offset", offset)
        _set(self, "vector_offset", vector_offset)
        _set(self, "indirect_dim", indirect_dim)
        _set(self, "row_size", row_size)
        _set(self, "shape", shape)
        _set(self, "is_sbuf", is_sbuf)
        _set(self, "_in_bounds", False)
        self._check()

    def _check(self):
        pattern, is_sbuf = self.pattern, self.is_sbuf
        if (self.vector_offset is None) != (self.indirect_dim is None):
            raise InvalidValueError(f"access pattern on {self.tensor.name!r}: vector_offset and indirect_dim go together")
        if self.indirect_dim is not None:
            self._check_indirect()
        if is_sbuf:
            free = self.tensor.free_size
            if pattern[0][0] % free and pattern[0][1] > 1:
                raise InvalidValueError(f"the first [step, num] pair of an SBUF access pattern walks partitions: its step "
                                        f"must be a multiple of tile {self.tensor.name!r}'s free size {free}, got {pattern[0][0]}")

    def _check_indirect(self):
        v = self.vector_offset
        if self.indirect_dim != 0:
            raise InvalidValueError(f"indirect access on {self.tensor.name!r} supports only indirect_dim=0, got {self.indirect_dim}")
        if self.is_sbuf:
            raise InvalidValueError(f"indirect access needs the indexed tensor in HBM, but {self.tensor.name!r} is in SBUF")
        dtype = v.tensor.dtype  # int32: kind and size, as its name says (reading dtype.name is slow)
        if not v.is_sbuf or dtype.kind != "i" or dtype.itemsize != 4 or v.shape != (self.shape[0], 1):
            raise InvalidValueError(f"vector_offset of an indirect access on {self.tensor.name!r} must be an int32 "
                                    f"({self.shape[0]}, 1) SBUF tile, got {v.describe()} of shape {v.shape}")
        if self.row_size < 1:
            raise InvalidValueError(f"indirect access on {self.tensor.name!r} needs a row size of at least 1")

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dtype(self):
        return self.tensor.dtype

    @property
    def storage_size(self) -> int:
        return self.tensor.partitions * self.tensor.free_size if self.is_sbuf else self.tensor.size

    def free_span(self) -> int:
        """Largest offset reached by the pairs after the first (a gather's, whose steps are non-negative)."""
        return sum(s * (n - 1) for s, n in self.pattern[1:])

    def free_extent(self) -> tuple[int, int]:
        """(lowest, highest) offset the pairs after the first reach from the pattern's start (steps may be < 0)."""
        lo = hi = 0
        for s, n in self.pattern[1:]:
            if s < 0:
                lo += s * (n - 1)
            else:
                hi += s * (n - 1)
        return lo, hi

    def static_bounds(self) -> tuple[int, int]:
        """(lowest, highest) flat element touched by a direct (non-indirect) pattern."""
        (s0, n0), (lo, hi) = self.pattern[0], self.free_extent()
        first = s0 * (n0 - 1)
        return self.offset + lo + min(0, first), self.offset + hi + max(0, first)

    def check_static(self, where: str) -> None:
        """Bounds-check a direct pattern at trace time (once: patterns are immutable); name ``where`` on failure."""
        if self.indirect_dim is not None or self._in_bounds:
            return
        (s0, n0), low, span = self.pattern[0], 0, 0
        for s, n in self.pattern[1:]:  # free_extent() and static_bounds() in one pass: this runs per new pattern
            if s < 0:
                low += s * (n - 1)
            else:
                span += s * (n - 1)
        first, storage_size = s0 * (n0 - 1), self.storage_size
        lo, hi = self.offset + low + min(0, first), self.offset + span + max(0, first)
        if lo < 0 or hi >= storage_size:
            bad = lo if lo < 0 else hi
            raise OutOfBoundsError(f"{where}: out-of-bounds access to {self.describe()}: element {bad} "
                                   f"({self.locate(bad)}) is outside its {storage_size} elements")
        if self.is_sbuf:
            free = self.tensor.free_size
            f0 = self.offset % free
            if f0 + span >= free or f0 + low < 0:
                raise OutOfBoundsError(f"{where}: access to {self.describe()} runs past the "
                                       f"{'end' if f0 + span >= free else 'start'} of a partition (free size {free})")
        _set(self, "_in_bounds", True)

    def locate(self, element: int) -> str:
        """Say where a flat element is: partition and offset for SBUF, element for HBM."""
        if self.is_sbuf:
            p, f = divmod(element, self.tensor.free_size)
            return f"partition {p}, element {f}"
        return f"element {element}"

    def describe(self) -> str:
        """The pattern as it reads in a listing: ``t[0:128, 0:1]`` where plain, else ``t.ap(...)``."""
        t = self.tensor
        if self.is_sbuf and self.indirect_dim is None:
            free = t.free_size
            p0, f0 = divmod(self.offset, free)
            (s0, n0), rest = self.pattern[0], self.pattern[1:]
            if (s0 == free or n0 == 1) and len(rest) == 1 and rest[0][0] == 1:
                n1 = rest[0][1]
                return f"{t.name}[{p0}:{p0 + n0}, {f0}:{f0 + n1}]"
        pat = ",".join(f"[{s},{n}]" for s, n in self.pattern)
        text = f"{t.name}.ap([{pat}], offset={self.offset}"
        if self.indirect_dim is not None:
            text += f", vector_offset={self.vector_offset.describe()}, indirect_dim={self.indirect_dim}"
        return text + ")"


_set = object.__setattr__  # a frozen dataclass's fields are set through it

#: Patterns of non-negative int pairs already made -> (that pattern, its shape): the patterns of a trace repeat
#: (every iteration of a loop walks its tiles alike), and one shared copy of each keeps a large Program's
#: memory to its instructions. Emptied when full, so that it stays small.
_KNOWN: dict = {}
_KNOWN_MAX = 1 << 16


def _valid_int_pairs(pattern) -> bool:
    """True when ``pattern`` is already what __init__ makes of one: a non-empty tuple of (step, num) int pairs
    with step >= 0 and num >= 1. Kernels and the tracer build patterns so; they then skip the conversion."""
    if type(pattern) is not tuple or not pattern:
        return False
    for pair in pattern:
        if type(pair) is not tuple or len(pair) != 2:
            return False
        step, num = pair
        if type(step) is not int or type(num) is not int or step < 0 or num < 1:
            return False
    return True
