"""Executes a Program on numpy storage, instruction by instruction, bit-exactly.

``Executable(program)`` prepares every instruction once (SBUF views, constant
iota values, gather geometry) so that running the same Program again costs only
the work itself; ``run(program, inputs)`` is the one-shot form. Engines compute
in float32 and cast their results (``dtypes.cast``); DMAs copy bits. Every
address is bounds-checked: direct patterns when the Program is traced, indirect
ones (which depend on data) here, as each gather runs.

Running a Program often is cheaper still, with the same bits: from the third
run on, an output's storage is taken again once nobody holds it (``_storage``),
and a Program that only moves its input's bits (``copy_plan``: the forward
kernels') runs as one gather (``_Gather``). In the others only memory the
Program can read before writing it is poisoned (``Executable._poison_plan``),
gathers reuse the copies planned for their last (checked) index, and engine
instructions on small tiles reuse their last result while their sources' bits
stay the same (``_memoized``). Copies between tiles read through a second
mapping of the SBUF (``memory.aliased_storage``), which spares numpy a
temporary copy. The verifier runs every proof on the instructions
(``gather=False``).
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import sys
import threading

import numpy as np

from ..errors import InvalidTypeError, InvalidValueError
from . import copy_plan, dtypes
from .access import AccessPattern
from .errors import OutOfBoundsError
from .isa import (
    ACTIVATION_FUNCS,
    ALU_OPS,
    Activation,
    BnAggr,
    BnStats,
    DmaCopy,
    DmaCopyAdd,
    Iota,
    AffineSelect,
    CopyPredicated,
    Memset,
    NcMatmul,
    NcNGather,
    NcTranspose,
    Program,
    Reciprocal,
    ScalarTensorTensor,
    TensorCopy,
    TensorPartitionReduce,
    TensorScalar,
    Select,
    TensorReduce,
    TensorTensor,
    TensorTensorScan,
)
from .memory import (HOST_MEMORY_SHARE, NUM_PARTITIONS, POISON_BYTE, HbmTensor, aliased_storage, check_host_memory,
                     host_memory_available, poisoned, poisoner, sbuf_view)

_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


#: A copy of at least _SPLIT_MIN_ELEMENTS elements is split along short inner axes (at most _SHORT_AXIS elements)
#: into at most _MAX_PARTS copies.
_SPLIT_MIN_ELEMENTS, _SHORT_AXIS, _MAX_PARTS = 4096, 4, 16


def _short_inner_axis(shape: tuple, dst_strides: tuple, src_strides: tuple) -> int | None:
    """The axis to split a large copy along, if any: a short one (a few elements, such as the 2 or 3 pixels a
    nearest upsample repeats, or 3 channels) that numpy would loop over innermost.

    ``np.copyto`` loops innermost over the destination's axis of smallest stride,
    merged with the next where both arrays are contiguous across them; an inner
    loop of 2 elements costs about a loop call per 2 elements. Copying one index of
    that axis at a time puts a longer axis innermost: several times faster.
    """
    if math.prod(shape) < _SPLIT_MIN_ELEMENTS:
        return None
    axes = sorted((k for k, n in enumerate(shape) if n > 1), key=lambda k: abs(dst_strides[k]))
    if len(axes) < 2:
        return None
    inner, outer = axes[0], axes[1]
    n = shape[inner]
    merged = all(strides[outer] == n * strides[inner] for strides in (dst_strides, src_strides))
    if n > _SHORT_AXIS or merged or max(shape[k] for k in axes[1:]) < 4 * n:
        return None
    return inner


def _copy_parts(shape: tuple, dst_strides: tuple, src_strides: tuple) -> list | None:
    """Index tuples splitting a copy along its short inner axes (``_short_inner_axis``, again on each part) until
    a long axis is innermost; None where one copy is best."""
    shape, split = list(shape), {}
    while (axis := _short_inner_axis(shape, dst_strides, src_strides)) is not None:
        if math.prod(split.values()) * shape[axis] > _MAX_PARTS:
            break
        split[axis], shape[axis] = shape[axis], 1
    if not split:
        return None
    parts = []
    for ks in itertools.product(*map(range, split.values())):
        part = [slice(None)] * len(shape)
        for axis, k in zip(split, ks):
            part[axis] = k
        parts.append(tuple(part))
    return parts


def _may_overlap(a: AccessPattern, b: AccessPattern) -> bool:
    """Whether two direct patterns may reach common bytes: on one HBM tensor, or on SBUF tiles whose byte columns
    (each tile spans its partitions from 0 at the same addresses) meet."""
    if a.is_sbuf != b.is_sbuf:
        return False
    if not a.is_sbuf:
        return a.tensor is b.tensor
    s, t = a.tensor, b.tensor
    return s.address < t.address + t.bytes_per_partition and t.address < s.address + s.bytes_per_partition


#: A gather copies rows run by run where each copy moves at least this many bytes (see Executable._gather), and
#: looks for row maps repeating with a period of up to _MAX_PERIOD partitions (see _row_copies).
_RUN_BYTES, _MAX_PERIOD = 2048, 16


def _row_copies(idx: np.ndarray) -> list:
    """The gather out[i] = rows[idx[i]] as a few slice copies out[part] = rows[source]: [(part, source), ...].

    Each copy takes an arithmetic progression of rows (step >= 0; step 0 repeats
    one row) into a slice of ``out``: either runs of consecutive entries, found
    greedily, or the ``p`` interleaved classes idx[j::p] (p <= _MAX_PERIOD), which
    catch a resize's periodic row maps (0, 1, 2, 4, 5, 7, 8, 10, ...: 7 classes).
    """
    def rows(first, step, count):
        return first if step == 0 or count == 1 else slice(first, first + step * (count - 1) + 1, step)

    n, runs, k, values = len(idx), [], 0, idx.tolist()
    while k < n:
        first, m, step = values[k], k + 1, 0
        if m < n and values[m] >= first:
            step = values[m] - first
            while m < n and values[m] == first + step * (m - k):
                m += 1
        runs.append((slice(k, m), rows(first, step, m - k)))
        k = m
    for p in range(1, min(_MAX_PERIOD, len(runs) - 1) + 1):
        lag = idx[p:] - idx[:-p]  # class j steps by lag[j], lag[j + p], ...: all one value in an arithmetic class
        if (lag >= 0).all() and (lag[p:] == lag[:-p]).all():
            return [(slice(j, None, p), rows(values[j], int(lag[j]) if j < len(lag) else 0, len(range(j, n, p))))
                    for j in range(p)]
    return runs


#: Engine instructions that compute (a same-dtype tensor_copy only copies); those reading at most _MEMO_BYTES
#: bytes are memoized (see _memoized).
_COMPUTES, _MEMO_BYTES = (TensorScalar, TensorTensor, Activation, Select, TensorReduce, TensorCopy, TensorTensorScan,
                           BnStats, BnAggr, TensorPartitionReduce, ScalarTensorTensor, Reciprocal, NcTranspose), 16384


def _memoized(step, sources: list, dst: np.ndarray):
    """``step`` (an engine instruction on small tiles) run only when its sources' bits change; else its last result
    is copied back. The result depends on nothing else, and index arithmetic (iota, scale, floor, min) repeats
    bit for bit in every run of a Program."""
    last = [None, None]

    def run():
        key = b"".join([v.tobytes() for v in sources])
        if key == last[0]:
            np.copyto(dst, last[1])
        else:
            step()
            last[:] = key, dst.copy()
    return run


def _sum_in_order(x: np.ndarray) -> np.ndarray:
    """The float32 sum along the last axis, element after element (np.add.accumulate adds in order; np.sum pairs)."""
    return np.add.accumulate(x, axis=-1)[..., -1]


#: Reductions with a numpy ufunc; those whose float rounding depends on the order reduce element after element.
_REDUCE_UFUNCS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
                  "maximum": np.maximum, "max": np.maximum, "minimum": np.minimum, "min": np.minimum}
_ORDERED = ("add", "subtract", "multiply", "divide")


def _reduce_last(op: str, x: np.ndarray) -> np.ndarray:
    """ALU ``op`` over the last axis of float32 ``x``, in order (an op without a ufunc is folded one by one)."""
    ufunc = _REDUCE_UFUNCS.get(op)
    if ufunc is None:
        f, y = ALU_OPS[op], x[..., 0]
        for k in range(1, x.shape[-1]):
            y = f(y, x[..., k])
        return y
    return ufunc.accumulate(x, axis=-1)[..., -1] if op in _ORDERED else ufunc.reduce(x, axis=-1)


def _bits(a: np.ndarray) -> np.ndarray:
    """Reinterpret as unsigned integers of the same width, so that copies move bits, never values."""
    return a.view(_BITS[a.dtype.itemsize])


class _Repeats:
    """How the keys of a scatter-add repeat: the positions sorted by key (stably), and where each key's run starts."""

    def __init__(self, key: np.ndarray):
        self.order = np.argsort(key, kind="stable")
        ranked = key[self.order]
        self.starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
        self.counts = np.diff(np.r_[self.starts, len(key)])
        self.keys = ranked[self.starts]
        self.most = int(self.counts.max()) if len(key) else 0

    @functools.cached_property
    def passes(self) -> list:
        """Positions split into passes of distinct keys: pass m holds every key's m-th occurrence.

        Running the passes in order adds the contributions to each address in
        their original order, and each pass is a plain (duplicate-free)
        fancy-index update.
        """
        if self.most <= 1:
            return [slice(None)]
        rank = np.empty(len(self.order), np.intp)
        rank[self.order] = np.arange(len(self.order)) - np.repeat(self.starts, self.counts)
        return [np.nonzero(rank == m)[0] for m in range(self.most)]

    def accumulate(self, target: np.ndarray, values: np.ndarray) -> bool:
        """target[key[i]] += values[i] in order, in float32, at once; False when it would take too much memory.

        Each key's contributions are laid in a row after its current value and
        summed by ``np.add.accumulate``, which adds one at a time, in order: the
        passes' result without a numpy call per repeat. Rows shorter than the
        longest are padded with -0.0, which changes no sum.
        """
        if len(self.keys) * (self.most + 1) > 4 * len(self.order) + 4096:
            return False
        terms = np.full((len(self.keys), self.most + 1, *values.shape[1:]), -0.0, np.float32)
        terms[:, 0] = target[self.keys]
        rank = np.arange(len(self.order)) - np.repeat(self.starts, self.counts)
        terms[np.repeat(np.arange(len(self.keys)), self.counts), rank + 1] = values[self.order]
        target[self.keys] = np.add.accumulate(terms, axis=1)[:, -1]
        return True


#: Bytes of a gather's map allowed whatever the output's size (see _Gather.of).
_GATHER_MAP_BYTES = 16 << 20


class _Gather:
    """A Program that moves its input's bits only (``copy_plan``), as ``out = in[map]``: whole rows of the last
    axis taken at once where the map moves them together, the poison byte where no copy reaches."""

    def __init__(self, rows: np.ndarray, poison: np.ndarray, width: int, bits: np.dtype):
        self.rows, self.poison, self.width, self.bits = rows, poison, width, bits

    @classmethod
    def of(cls, program: Program) -> _Gather | None:
        """The gather of ``program``, or None where it does not only move bits, or its map (an index per row) would
        outweigh twice the output and _GATHER_MAP_BYTES (one index per element of a large uint8 mask)."""
        if not copy_plan.moves_bits_only(program) or program.inputs[0].dtype.itemsize not in (1, 2, 4):
            return None
        (x,), (out,) = program.inputs, program.outputs
        width = out.shape[-1] if out.shape[-1] == x.shape[-1] else 1
        if out.size // width * 8 > max(2 * out.size * out.dtype.itemsize, _GATHER_MAP_BYTES):
            return None
        labelled = 4 * (x.size + 3 * out.size) + NUM_PARTITIONS * (program.sbuf_high_water + program.psum_high_water)
        # (the label runs' input, output, two maps and SBUF)
        if labelled > HOST_MEMORY_SHARE * host_memory_available():
            return None  # finding the map would strain the host: run the instructions
        found = copy_plan.copy_map(Executable, program)
        if found is None:
            return None
        heads = found.reshape(-1, width)[:, 0]
        poison = heads < 0
        runs = np.where(poison, -1, heads)[:, None] + np.arange(width)
        if width > 1 and not ((heads[~poison] % width == 0).all()
                              and np.array_equal(np.where(poison[:, None], -1, runs), found.reshape(-1, width))):
            return cls.of_elements(found, out.dtype)
        rows, poison, item = np.where(poison, 0, heads // width).astype(np.intp), np.flatnonzero(poison), \
            out.dtype.itemsize
        if width * item in _BITS:  # a narrow row (an RGBA pixel) as one wider element: a copy per row, not per byte
            return cls(rows, poison, 1, _BITS[width * item])
        return cls(rows, poison, width, _BITS[item])

    @classmethod
    def of_elements(cls, found: np.ndarray, dtype: np.dtype) -> _Gather:
        poison = found < 0
        return cls(np.where(poison, 0, found).astype(np.intp), np.flatnonzero(poison), 1, _BITS[dtype.itemsize])

    def __call__(self, x: np.ndarray, out: np.ndarray, poison_outputs: bool) -> None:
        dst = out.view(self.bits).reshape(-1, self.width)
        # (mode="clip": every index is in range by construction, and "raise" would buffer the whole output)
        np.take(x.view(self.bits).reshape(-1, self.width), self.rows, axis=0, out=dst, mode="clip")
        if poison_outputs and self.poison.size:
            dst[self.poison] = np.array(-1).astype(self.bits)  # every byte POISON_BYTE


#: sys.getrefcount of a storage array held only by _storage's local name (and the call's own argument).
_OURS_ALONE = 2
#: Runs of a Program after which the next ones are prepared for speed (Executable._prepare_all): a Program run
#: only once or twice (a sweep, a verifier) would not make up the cost.
_REPEATED_AFTER = 2


class Executable:
    """A Program prepared for repeated execution on the simulated NeuronCore (one run at a time). ``gather=False``
    keeps every run on the instructions (the verifier's proofs): no Program runs as one gather (``_Gather``)."""

    def __init__(self, program: Program, gather: bool = True):
        self.program, self._gathers = program, gather
        tensors = program.inputs + program.outputs + program.internal + program.constants
        self.slot = {t: n for n, t in enumerate(tensors)}
        self.mem: list[np.ndarray | None] = [None] * len(tensors)
        self._lock = threading.Lock()
        self._runs = 0
        self._plan = None  # what to poison before a run (see _poison_plan); None: all fresh memory
        self._handed_out: dict = {}  # output tensor -> the storage the last run returned (see _storage)
        self._as_gather = None  # the Program as one gather, once it has run twice (a _Gather), where it moves bits only
        self._act_regs = np.full(NUM_PARTITIONS, np.nan, np.float32)  # the scalar engine's reduce registers
        self._prepare_all(repeated=False)

    def _prepare_all(self, repeated: bool) -> None:
        """The SBUF storage and the steps prepared on it.

        A Program run often (``repeated``) also gets the speed paths that cost more
        to prepare than one run saves: copies split along short inner axes
        (``_copy_parts``), gathers as slice copies (``_row_copies``), engine steps on
        small tiles memoized (``_memoized``), and, if it copies between tiles, SBUF
        storage mapped twice (``memory.aliased_storage``).
        """
        p = self.program
        width = p.sbuf_partition_bytes + p.psum_high_water if p.psum_high_water else \
            p.sbuf_high_water  # PSUM tiles lie past the SBUF capacity
        shape = (NUM_PARTITIONS, max(width, 1))
        copies_between_tiles = any(isinstance(i, (TensorCopy, DmaCopy)) and i.dst.is_sbuf and i.src.is_sbuf
                                   for i in p.instructions)
        self.sbuf, self._sbuf_alias = aliased_storage(shape) if repeated and copies_between_tiles else \
            (np.empty(shape, np.uint8), None)
        self._repeated, self._pid = repeated, os.getpid()
        self._views: dict[AccessPattern, np.ndarray] = {}
        self.steps = [self._prepare(n, inst) for n, inst in enumerate(p.instructions)]

    # -- running ---------------------------------------------------------------------------------
    def run(self, inputs, poison_outputs: bool = True) -> list[np.ndarray]:
        """Run on ``inputs`` (numpy arrays matching the Program's inputs); return the outputs."""
        p = self.program
        if len(inputs) != len(p.inputs):
            raise InvalidValueError(f"program {p.name} takes {len(p.inputs)} inputs "
                                    f"({', '.join(t.name for t in p.inputs)}), got {len(inputs)}")
        check_host_memory(sum(t.size * t.dtype.itemsize for t in p.outputs + p.internal) + self.sbuf.nbytes,
                          f"simulating program {p.name}")
        with self._lock:
            if self._sbuf_alias is not None and self._pid != os.getpid():  # forked: mappings shared with the parent
                self._prepare_all(repeated=True)
            for t, x in zip(p.inputs, inputs):
                if not isinstance(x, np.ndarray) or x.shape != t.shape or x.dtype != t.dtype:
                    got = f"{x.dtype}{list(x.shape)}" if isinstance(x, np.ndarray) else type(x).__name__
                    raise InvalidValueError(f"program {p.name} input {t} requires a "
                                            f"{t.dtype}{list(t.shape)} numpy array, got {got}")
                self.mem[self.slot[t]] = np.ascontiguousarray(x).reshape(-1)
            if self._runs == _REPEATED_AFTER:  # run often: worth finding what each run must poison, and speed paths
                self._as_gather = _Gather.of(self.program) if self._gathers else None
                self._plan = self._poison_plan() if self._as_gather is None else None
                if self._as_gather is None:
                    self._prepare_all(repeated=True)
            if self._as_gather is not None:  # the Program as one gather (machine/copy_plan.py)
                self._runs += 1
                (t,) = p.outputs
                out = self._storage(t)
                self._as_gather(self.mem[self.slot[p.inputs[0]]], out, poison_outputs)
                self.mem[:] = [None] * len(self.mem)
                return [out.reshape(t.shape)]
            for t in p.constants:  # a copy: a Program cannot change its constants for the next run
                self.mem[self.slot[t]] = t.data.reshape(-1).copy()
            self._fresh_memory(poison_outputs)
            self._act_regs.fill(np.nan)  # the scalar engine's reduce registers start unknown: NaN shows a read
            self._runs += 1
            with np.errstate(all="ignore"):  # inf - inf, overflows: the engines' IEEE results, no host warnings
                for step in self.steps:
                    step()
            outs = [self.mem[self.slot[t]].reshape(t.shape) for t in p.outputs]
            self.mem[:] = [None] * len(self.mem)  # in place: the prepared steps hold this list
        return outs

    def _fresh_memory(self, poison_outputs: bool) -> None:
        """Give the run fresh output and internal tensors and a fresh SBUF, poisoned (0xFF) wherever it may read them.

        The first runs poison them whole. Later runs follow ``_poison_plan``: only
        what the Program can read before writing it (and outputs' elements it never
        writes) is poisoned, the rest keeps the previous run's bytes, which no read
        can see: every read finds the same bits as with all memory poisoned.
        """
        p, plan = self.program, self._plan
        for t in p.outputs + p.internal:
            if not poison_outputs:
                self.mem[self.slot[t]] = np.empty(t.size, t.dtype)
            elif plan is None:
                self.mem[self.slot[t]] = poisoned(t.size, t.dtype)
            else:
                self.mem[self.slot[t]] = a = self._storage(t)
                if plan[t] is not None:
                    plan[t](a.view(np.uint8))
        if plan is not None:
            if plan["sbuf"] is not None:
                plan["sbuf"](self.sbuf.reshape(-1))
        elif p.sbuf_extents is None:
            self.sbuf.fill(POISON_BYTE)
        else:
            for partitions, start, end in p.sbuf_extents:  # where tiles lie: nothing else is ever read
                self.sbuf[:partitions, start:end].fill(POISON_BYTE)

    def _storage(self, t: HbmTensor) -> np.ndarray:
        """Storage for ``t`` in a planned run: an output's last storage again where nobody holds it any more (no
        array the caller kept views it: its reference count is ours alone), which spares the system's zeroing of
        fresh pages, as a caching allocator does; else new. Its old bytes are as good as np.empty's: the plan
        poisons what a run could see."""
        old = self._handed_out.pop(t, None)
        a = old if old is not None and sys.getrefcount(old) <= _OURS_ALONE else np.empty(t.size, t.dtype)
        del old
        if t in self.program.outputs:
            self._handed_out[t] = a
        return a

    def _poison_plan(self) -> dict | None:
        """What each run must poison, found once from the Program's (static) access patterns: {tensor: poisoner,
        "sbuf": poisoner} (``memory.poisoner``: None for nothing), or None (poison everything) where it cannot say.

        Walking the instructions in order, each byte of SBUF and each element of an
        output or internal tensor is marked written by a destination, or read first
        by a source it reaches before any write. A run must poison the bytes read
        first, and outputs' elements never written (they are returned). A gather's
        indexed tensor and a scatter-add's target count as read whole: their rows
        depend on data. Every destination is written whole (a DMA with accumulate
        reads its destination first).
        """
        p, sbuf, base = self.program, self.sbuf, self.sbuf.__array_interface__["data"][0]
        tracked = p.outputs + p.internal
        if sum(t.size for t in tracked) + sbuf.size > HOST_MEMORY_SHARE * host_memory_available():
            return None
        state = {t: np.zeros(t.size, np.uint8) for t in tracked}  # bit 0: written; bit 1: read before written
        state["sbuf"] = np.zeros(sbuf.shape, np.uint8)

        def marks(ap: AccessPattern):
            """The state array's view of the elements (SBUF: the bytes) ``ap`` reaches; None for an input."""
            if ap.is_sbuf:
                tile = ap.tensor
                if tile.address + tile.bytes_per_partition > sbuf.shape[1]:
                    raise _NoPlan  # a hand-made Program's tile outside the SBUF array: views are not plain here
                v = self._sbuf_view(ap)
                return np.ndarray((*v.shape, v.itemsize), np.uint8, buffer=state["sbuf"],
                                  offset=v.__array_interface__["data"][0] - base, strides=(*v.strides, 1))
            marked = state.get(ap.tensor)
            if marked is None or ap.indirect_dim is not None:
                return marked
            return np.ndarray(ap.shape, np.uint8, buffer=marked, offset=ap.offset, strides=[s for s, _ in ap.pattern])

        try:
            for inst in p.instructions:
                reads = inst.sources() + ((inst.dst,) if inst.reads_dst else ())
                for ap in reads:
                    if (v := marks(ap)) is not None:
                        v = v[tuple(0 if step == 0 else slice(None) for step in v.strides)]  # a broadcast: once
                        v |= ((v & 1) ^ 1) << 1
                for dst in inst.destinations():
                    if dst.indirect_dim is None and (v := marks(dst)) is not None:
                        v |= 1
        except _NoPlan:
            return None
        def poison(marks: np.ndarray, unwritten_too: bool, itemsize: int = 1):
            """``memory.poisoner`` of the elements read before written (and, ``unwritten_too``, of those never
            written), after a quick look for any: there are usually none."""
            if not marks.size or (marks.max() < 2 and not (unwritten_too and marks.min() == 0)):
                return None
            return poisoner((marks != 1 if unwritten_too else marks >= 2).reshape(-1), itemsize)

        plan = {t: poison(state[t], t in p.outputs, t.dtype.itemsize) for t in tracked}
        plan["sbuf"] = poison(state["sbuf"], False)
        return plan

    # -- preparing ---------------------------------------------------------------------------------
    def _prepare(self, n: int, inst):
        prepare = self._PREPARE.get(type(inst))
        if prepare is None:
            raise InvalidTypeError(f"the simulator cannot execute instruction {n}: {type(inst).__name__}")
        step = prepare(self, n, inst)
        if self._repeated and isinstance(inst, _COMPUTES) and len(inst.destinations()) == 1 and \
                not getattr(inst, "uses_registers", False) and \
                not (isinstance(inst, TensorCopy) and inst.src.dtype == inst.dst.dtype):
            sources = [self._sbuf_view(ap) for ap in inst.sources()]
            if sum(v.nbytes for v in sources) <= _MEMO_BYTES:
                return _memoized(step, sources, self._sbuf_view(inst.dst))
        return step

    def _sbuf_view(self, ap: AccessPattern) -> np.ndarray:
        """A numpy view of a direct SBUF access pattern (prepared once per pattern)."""
        view = self._views.get(ap)
        if view is None:
            view = self._views[ap] = self._make_sbuf_view(ap)
        return view

    def _make_sbuf_view(self, ap: AccessPattern) -> np.ndarray:
        """The view at the pattern's address in the (C-contiguous) SBUF array, made directly by ``np.ndarray``:
        the view ``sbuf_view(...)[p0:, f0:]`` strided by ``as_strided`` would be, at a fraction of the cost."""
        tile = ap.tensor
        free, item, row = tile.free_size, tile.dtype.itemsize, self.sbuf.strides[0]
        p0, f0 = divmod(ap.offset, free)
        (s0, n0), rest = ap.pattern[0], ap.pattern[1:]
        if (s0 == free or n0 == 1) and len(rest) == 1 and rest[0][0] == 1:  # a plain [p0:p1, f0:f1] slice
            shape, strides = (n0, rest[0][1]), (row, item)
        else:
            shape, strides = ap.shape, ((s0 // free) * row, *[s * item for s, _ in rest])
        if tile.address + tile.bytes_per_partition > self.sbuf.shape[1]:  # a hand-made Program: the general path
            return self._make_sbuf_view_by_slicing(ap)
        return np.ndarray(shape, tile.dtype, buffer=self.sbuf, offset=p0 * row + tile.address + f0 * item,
                          strides=strides)

    def _source_view(self, ap: AccessPattern) -> np.ndarray:
        """The view of a direct SBUF pattern that a copy reads, through the second mapping of the SBUF where there is
        one: numpy then copies in one pass (see ``memory.aliased_storage``). Only for a copy whose destination does
        not ``_may_overlap`` it."""
        v, tile = self._sbuf_view(ap), ap.tensor
        if self._sbuf_alias is None or tile.address + tile.bytes_per_partition > self.sbuf.shape[1]:
            return v
        offset = v.__array_interface__["data"][0] - self.sbuf.__array_interface__["data"][0]
        return np.ndarray(v.shape, v.dtype, buffer=self._sbuf_alias, offset=offset, strides=v.strides)

    def _make_sbuf_view_by_slicing(self, ap: AccessPattern) -> np.ndarray:
        tile = ap.tensor
        base = sbuf_view(self.sbuf, tile)
        free = tile.free_size
        p0, f0 = divmod(ap.offset, free)
        (s0, n0), rest = ap.pattern[0], ap.pattern[1:]
        if (s0 == free or n0 == 1) and len(rest) == 1 and rest[0][0] == 1:  # a plain [p0:p1, f0:f1] slice
            return base[p0:p0 + n0, f0:f0 + rest[0][1]]
        item = tile.dtype.itemsize
        strides = ((s0 // free) * base.strides[0], *(s * item for s, _ in rest))
        return np.lib.stride_tricks.as_strided(base[p0:, f0:], shape=ap.shape, strides=strides)

    def _hbm_view(self, ap: AccessPattern):
        """A function giving the numpy view of a direct HBM access pattern in the current run."""
        slot, o, shape = self.slot[ap.tensor], ap.offset, ap.shape
        contiguous = all(step == math.prod(shape[k + 1:]) for k, (step, _) in enumerate(ap.pattern))
        mem = self.mem
        if contiguous:
            size = ap.size
            return lambda: mem[slot][o:o + size].reshape(shape)
        item = ap.dtype.itemsize
        strides = tuple(s * item for s, _ in ap.pattern)  # steps may be negative: np.ndarray checks the extent
        return lambda: np.ndarray(shape, ap.dtype, buffer=mem[slot], offset=o * item, strides=strides)

    def _view(self, ap: AccessPattern):
        """A function giving the view of a direct access pattern, wherever it lives."""
        if ap.is_sbuf:
            v = self._sbuf_view(ap)
            return lambda: v
        return self._hbm_view(ap)

    # -- engines ---------------------------------------------------------------------------------
    def _iota(self, n: int, inst: Iota):
        dst = self._sbuf_view(inst.dst)
        p = np.arange(dst.shape[0], dtype=np.int64).reshape((-1,) + (1,) * len(inst.pattern))
        values = inst.offset + p * inst.channel_multiplier
        for k, (step, num) in enumerate(inst.pattern):
            axis = [1] * (len(inst.pattern) + 1)
            axis[k + 1] = num
            values = values + step * np.arange(num, dtype=np.int64).reshape(axis)
        values = dtypes.cast(values.astype(np.float32), dst.dtype).reshape(dst.shape)
        return lambda: np.copyto(dst, values)

    def _affine_select(self, n: int, inst: AffineSelect):
        dst, on_true = self._sbuf_view(inst.dst), self._sbuf_view(inst.on_true)
        p = np.arange(dst.shape[0], dtype=np.int64).reshape((-1,) + (1,) * len(inst.pattern))
        values = inst.offset + p * inst.channel_multiplier
        for k, (step, num) in enumerate(inst.pattern):
            axis = [1] * (len(inst.pattern) + 1)
            axis[k + 1] = num
            values = values + step * np.arange(num, dtype=np.int64).reshape(axis)
        keep = (ALU_OPS[inst.cmp_op](values, 0) != 0).reshape(dst.shape)
        on_false, out_dtype, to_f32, cast = np.float32(inst.on_false), dst.dtype, dtypes.to_f32, dtypes.cast
        return lambda: np.copyto(dst, cast(np.where(keep, to_f32(on_true), on_false).astype(np.float32), out_dtype))

    def _operand(self, x, ndim: int):
        """A function giving a scalar-or-tile operand as float32: a number, or a (P, 1) tile shaped (P, 1, ...) to
        broadcast along ``ndim - 1`` free axes."""
        if isinstance(x, AccessPattern):
            v, shape, to_f32 = self._sbuf_view(x), (x.shape[0],) + (1,) * (ndim - 1), dtypes.to_f32
            return lambda: to_f32(v).reshape(shape)
        c = np.float32(x)
        return lambda: c

    def _tensor_scalar(self, n: int, inst: TensorScalar):
        dst, data = self._sbuf_view(inst.dst), self._sbuf_view(inst.data)
        if inst.reduce_res is not None:
            return self._tensor_scalar_reduce(inst, dst, data)
        if isinstance(inst.operand0, AccessPattern) or isinstance(inst.operand1, AccessPattern):
            return self._tensor_scalar_tiles(inst, dst, data)
        f0, c0, r0 = ALU_OPS[inst.op0], np.float32(inst.operand0), inst.reverse0
        f1 = ALU_OPS[inst.op1] if inst.op1 is not None else None
        c1, r1 = np.float32(inst.operand1 if inst.operand1 is not None else 0), inst.reverse1
        out_dtype, to_f32, cast = dst.dtype, dtypes.to_f32, dtypes.cast

        def step():
            x = to_f32(data)
            y = f0(c0, x) if r0 else f0(x, c0)
            if f1 is not None:
                y = f1(c1, y) if r1 else f1(y, c1)
            np.copyto(dst, cast(y, out_dtype))
        return step

    def _tensor_scalar_tiles(self, inst: TensorScalar, dst, data):
        """tensor_scalar with a (P, 1) tile among its operands: each partition's value broadcast along its row."""
        f0, r0, c0 = ALU_OPS[inst.op0], inst.reverse0, self._operand(inst.operand0, data.ndim)
        f1 = ALU_OPS[inst.op1] if inst.op1 is not None else None
        r1, c1 = inst.reverse1, self._operand(inst.operand1 if inst.operand1 is not None else 0.0, data.ndim)
        out_dtype, to_f32, cast = dst.dtype, dtypes.to_f32, dtypes.cast

        def step():
            x = to_f32(data)
            y = f0(c0(), x) if r0 else f0(x, c0())
            if f1 is not None:
                y = f1(c1(), y) if r1 else f1(y, c1())
            np.copyto(dst, cast(np.asarray(y, np.float32), out_dtype))
        return step

    def _tensor_scalar_reduce(self, inst: TensorScalar, dst, data):
        """tensor_scalar with one op, then reduce_op over each partition's float32 results, in order (as
        tensor_reduce does), into reduce_res. ASSUMED: the reduction takes the results before their cast to dst's
        dtype (the page's "reduction along the free dimension of the tensor_scalar result")."""
        f0, r0, c0 = ALU_OPS[inst.op0], inst.reverse0, self._operand(inst.operand0, data.ndim)
        res = self._sbuf_view(inst.reduce_res)
        out_dtype, res_dtype, to_f32, cast = dst.dtype, res.dtype, dtypes.to_f32, dtypes.cast

        def step():
            x = to_f32(data)
            with np.errstate(all="ignore"):
                y = np.asarray(f0(c0(), x) if r0 else f0(x, c0()), np.float32)
                total = _reduce_last(inst.reduce_op, y.reshape(y.shape[0], -1))
            np.copyto(dst, cast(y, out_dtype))
            np.copyto(res, cast(np.asarray(total, np.float32), res_dtype).reshape(res.shape))
        return step

    def _tensor_tensor(self, n: int, inst: TensorTensor):
        dst, a, b = self._sbuf_view(inst.dst), self._sbuf_view(inst.data1), self._sbuf_view(inst.data2)
        f, out_dtype, to_f32, cast = ALU_OPS[inst.op], dst.dtype, dtypes.to_f32, dtypes.cast
        return lambda: np.copyto(dst, cast(f(to_f32(a), to_f32(b)), out_dtype))

    def _tensor_copy(self, n: int, inst: TensorCopy):
        dst, src = self._sbuf_view(inst.dst), self._sbuf_view(inst.src)
        if dst.dtype == src.dtype:
            d, s = _bits(dst), _bits(src if _may_overlap(inst.dst, inst.src) else self._source_view(inst.src))
            return self._copy_step(lambda: d, lambda: s, inst.dst, inst.src)
        out_dtype, to_f32, cast = dst.dtype, dtypes.to_f32, dtypes.cast
        return lambda: np.copyto(dst, cast(to_f32(src), out_dtype))

    def _nc_n_gather(self, n: int, inst: NcNGather):
        dst, data, idx = _bits(self._sbuf_view(inst.dst)), _bits(self._sbuf_view(inst.data)), self._sbuf_view(inst.indices)
        parts, size = data.shape[0], data.size // data.shape[0]

        def run():
            flat, where = data.reshape(parts, size), idx.reshape(parts, -1).astype(np.int64)
            bad = where >= size
            if bad.any():
                p, j = (int(v[0]) for v in np.nonzero(bad))
                raise OutOfBoundsError(f"instruction {n} (nc_n_gather): partition {p} index {int(where[p, j])} is past "
                                       f"the {size} elements of {inst.data.describe()}")
            np.copyto(dst, np.take_along_axis(flat, where, axis=1).reshape(dst.shape))
        return run

    def _copy_predicated(self, n: int, inst: CopyPredicated):
        dst, pred = _bits(self._sbuf_view(inst.dst)), self._sbuf_view(inst.predicate)
        if isinstance(inst.src, AccessPattern):
            src = _bits(self._sbuf_view(inst.src))
        else:  # a number, cast to dst's dtype once
            src = _bits(dtypes.cast(np.full(1, inst.src, np.float32), self._sbuf_view(inst.dst).dtype))[0]
        reverse = inst.reverse
        return lambda: np.copyto(dst, src, where=(pred == 0) if reverse else (pred != 0))

    def _select(self, n: int, inst: Select):
        dst, pred = self._sbuf_view(inst.dst), self._sbuf_view(inst.predicate)
        out_dtype, to_f32, cast = dst.dtype, dtypes.to_f32, dtypes.cast

        def operand(x):
            if isinstance(x, AccessPattern):
                v = self._sbuf_view(x)
                return lambda: to_f32(v)
            c = np.float32(x)
            return lambda: c

        on_true, on_false = operand(inst.on_true), operand(inst.on_false)
        return lambda: np.copyto(dst, cast(np.where(pred != 0, on_true(), on_false()).astype(np.float32), out_dtype))

    def _tensor_reduce(self, n: int, inst: TensorReduce):
        dst, data = self._sbuf_view(inst.dst), self._sbuf_view(inst.data)
        out_dtype, to_f32, cast = dst.dtype, dtypes.to_f32, dtypes.cast
        kept = data.shape[:data.ndim - inst.axes]
        sign = np.float32(-1 if inst.negate else 1)

        def step():
            x = to_f32(data).reshape(*kept, -1)
            with np.errstate(all="ignore"):
                y = np.asarray(_reduce_last(inst.op, x), np.float32) * sign
            np.copyto(dst, cast(y, out_dtype).reshape(dst.shape))
        return step

    def _activation(self, n: int, inst: Activation):
        dst, data = self._sbuf_view(inst.dst), self._sbuf_view(inst.data)
        f, out_dtype, to_f32, cast = ACTIVATION_FUNCS[inst.func], dst.dtype, dtypes.to_f32, dtypes.cast
        if not inst.uses_registers and not any(isinstance(x, AccessPattern) for x in (inst.scale, inst.bias)):
            scale, bias = np.float32(inst.scale), np.float32(inst.bias)
            # float32 throughout, the product and sum always made (x * 1 + 0 is +0.0 for x = -0.0)
            return lambda: np.copyto(dst, cast(f(to_f32(data) * scale + bias), out_dtype))
        scale, bias = self._operand(inst.scale, data.ndim), self._operand(inst.bias, data.ndim)
        parts = data.shape[0]
        first = inst.data.offset // inst.data.tensor.free_size  # the lanes (partitions) it runs on
        regs, lanes, cmd = self._act_regs, slice(first, first + parts), inst.reduce_cmd
        res = None if inst.reduce_res is None else self._sbuf_view(inst.reduce_res)

        def step():
            y = f(to_f32(data) * scale() + bias())
            if cmd in ("reset", "reset_reduce"):
                regs[lanes] = 0.0
            if cmd in ("reduce", "reset_reduce"):  # each value into its partition's register, in order, in float32
                terms = np.concatenate([regs[lanes, None], y.reshape(parts, -1)], axis=1)
                with np.errstate(all="ignore"):
                    regs[lanes] = np.add.accumulate(terms, axis=1)[:, -1]
            if res is not None:
                np.copyto(res, cast(regs[lanes].copy(), res.dtype).reshape(res.shape))
            np.copyto(dst, cast(y, out_dtype))
        return step

    # -- tensor engine ------------------------------------------------------------------------------
    def _nc_matmul(self, n: int, inst: NcMatmul):
        """dst (M, N) [+]= stationary.T @ moving: float32 products summed over k in order from +0.0; in double_row
        mode each row k's two products (t = 0, then 1) are summed first, then that sum joins the running sum
        (NcMatmul)."""
        dst, st, mv = self._sbuf_view(inst.dst), self._sbuf_view(inst.stationary), self._sbuf_view(inst.moving)
        pairs = inst.pairs
        k, m, cols = st.shape[0], st.size // st.shape[0] // pairs, mv.size // mv.shape[0] // pairs
        to_f32, accumulate = dtypes.to_f32, inst.accumulate
        hints = [(what, view) for what, view, hint in (("stationary", st, inst.is_stationary_onezero),
                                                       ("moving", mv, inst.is_moving_onezero)) if hint]

        def step():
            for what, view in hints:
                if not np.all((view == 0) | (view == 1)):
                    raise InvalidValueError(f"instruction {n} (nc_matmul): is_{what}_onezero says {what} holds only 0 "
                                            f"and 1, but {inst.__dict__[what].describe()} holds other values; drop "
                                            f"the hint")
            a, b = to_f32(st).reshape(k, pairs, m), to_f32(mv).reshape(k, pairs, cols)
            total, term = np.zeros((m, cols), np.float32), np.empty((m, cols), np.float32)
            second = np.empty((m, cols), np.float32) if pairs == 2 else None
            with np.errstate(all="ignore"):
                for row in range(k):
                    np.multiply(a[row, 0][:, None], b[row, 0][None, :], out=term)
                    if second is not None:  # the PE's pair: its two products summed before the column's sum
                        np.multiply(a[row, 1][:, None], b[row, 1][None, :], out=second)
                        np.add(term, second, out=term)
                    np.add(total, term, out=total)
                if accumulate:
                    total = np.add(dst.reshape(m, cols), total)
            np.copyto(dst, total.reshape(dst.shape))
        return step

    def _nc_transpose(self, n: int, inst: NcTranspose):
        """dst[f, p] = data[p, f], bits."""
        dst, data = _bits(self._sbuf_view(inst.dst)), _bits(self._sbuf_view(inst.data))
        parts = data.shape[0]
        return lambda: np.copyto(dst, data.reshape(parts, -1).T.reshape(dst.shape))

    # -- vector engine and GpSimd extras -------------------------------------------------------------
    def _tensor_tensor_scan(self, n: int, inst: TensorTensorScan):
        dst, d0, d1 = (self._sbuf_view(ap) for ap in (inst.dst, inst.data0, inst.data1))
        f0, f1, r0, r1 = ALU_OPS[inst.op0], ALU_OPS[inst.op1], inst.reverse0, inst.reverse1
        parts, to_f32, cast = dst.shape[0], dtypes.to_f32, dtypes.cast
        initial = self._operand(inst.initial, 2)

        def step():
            a, b = to_f32(d0).reshape(parts, -1), to_f32(d1).reshape(parts, -1)
            out = np.empty(a.shape, np.float32)
            prev = np.broadcast_to(initial(), (parts, 1))[:, 0].astype(np.float32)
            with np.errstate(all="ignore"):
                for i in range(a.shape[1]):
                    t = f0(prev, a[:, i]) if r0 else f0(a[:, i], prev)
                    prev = np.asarray(f1(b[:, i], t) if r1 else f1(t, b[:, i]), np.float32)
                    out[:, i] = prev
            np.copyto(dst, cast(out, dst.dtype).reshape(dst.shape))
        return step

    def _bn_stats(self, n: int, inst: BnStats):
        dst, data = self._sbuf_view(inst.dst), self._sbuf_view(inst.data)
        parts, to_f32, cast = data.shape[0], dtypes.to_f32, dtypes.cast

        def step():
            x = to_f32(data).reshape(parts, -1)
            out = np.zeros((parts, 6), np.float32)
            with np.errstate(all="ignore"):
                for half, values in enumerate((x[:, 0::2], x[:, 1::2])):
                    count = values.shape[1]
                    if count:
                        mean = _sum_in_order(values) / np.float32(count)
                        dev = values - mean[:, None]
                        out[:, 3 * half:3 * half + 3] = np.stack([np.full(parts, count, np.float32), mean,
                                                                  _sum_in_order(dev * dev)], axis=1)
            np.copyto(dst, cast(out, dst.dtype).reshape(dst.shape))
        return step

    def _bn_aggr(self, n: int, inst: BnAggr):
        dst, data = self._sbuf_view(inst.dst), self._sbuf_view(inst.data)
        parts, to_f32, cast = data.shape[0], dtypes.to_f32, dtypes.cast

        def step():
            t = to_f32(data).reshape(parts, -1, 3)
            count, mean_i, m2_i = t[..., 0], t[..., 1], t[..., 2]
            with np.errstate(all="ignore"):
                total = _sum_in_order(count)
                mean = _sum_in_order(count * mean_i) / total
                dev = mean_i - mean[:, None]
                var = (_sum_in_order(m2_i) + _sum_in_order(count * (dev * dev))) / total
            np.copyto(dst, cast(np.stack([mean, var], axis=1), dst.dtype).reshape(dst.shape))
        return step

    def _tensor_partition_reduce(self, n: int, inst: TensorPartitionReduce):
        dst, data = self._sbuf_view(inst.dst), self._sbuf_view(inst.data)
        parts, to_f32, cast = data.shape[0], dtypes.to_f32, dtypes.cast
        ufunc = {"add": np.add, "maximum": np.maximum}[inst.op]

        def step():
            x = to_f32(data).reshape(parts, -1)
            with np.errstate(all="ignore"):
                y = ufunc.accumulate(x, axis=0)[-1]  # partition after partition, in float32
            np.copyto(dst, cast(y, dst.dtype).reshape(dst.shape))
        return step

    def _scalar_tensor_tensor(self, n: int, inst: ScalarTensorTensor):
        dst, data, other = (self._sbuf_view(ap) for ap in (inst.dst, inst.data, inst.operand1))
        f0, f1, r0, r1 = ALU_OPS[inst.op0], ALU_OPS[inst.op1], inst.reverse0, inst.reverse1
        c, to_f32, cast = self._operand(inst.operand0, data.ndim), dtypes.to_f32, dtypes.cast

        def step():
            x, o = to_f32(data), to_f32(other)
            with np.errstate(all="ignore"):
                t = f0(c(), x) if r0 else f0(x, c())
                y = f1(o, t) if r1 else f1(t, o)
            np.copyto(dst, cast(np.asarray(y, np.float32), dst.dtype))
        return step

    def _reciprocal(self, n: int, inst: Reciprocal):
        dst, data = self._sbuf_view(inst.dst), self._sbuf_view(inst.data)
        one, to_f32, cast = np.float32(1), dtypes.to_f32, dtypes.cast

        def step():
            with np.errstate(divide="ignore"):
                np.copyto(dst, cast(one / to_f32(data), dst.dtype))
        return step

    # -- DMA ---------------------------------------------------------------------------------
    def _dma_copy(self, n: int, inst: DmaCopy):
        dst = self._bits_view(inst.dst)
        if inst.src.dtype != inst.dst.dtype:  # a casting DMA: through float32, as tensor_copy
            src, out_dtype, to_f32, cast = self._bits_view(inst.src), inst.dst.dtype, dtypes.to_f32, dtypes.cast
            in_dtype = inst.src.dtype
            return lambda: np.copyto(dst(), _bits(cast(to_f32(src().view(in_dtype)), out_dtype)))
        if inst.src.indirect_dim is None:
            src = self._bits_view(inst.src, into_other_tile=inst.dst.is_sbuf and not _may_overlap(inst.dst, inst.src))
            return self._copy_step(dst, src, inst.dst, inst.src)
        return self._gather(n, inst, dst)

    def _copy_step(self, dst, src, dst_ap: AccessPattern, src_ap: AccessPattern):
        """A step copying ``src()`` into ``dst()`` (functions giving the views of these direct patterns), split by
        ``_copy_parts`` where that helps, unless the two may overlap (then one copy reads all before writing)."""
        parts = None
        if self._repeated and dst_ap.size >= _SPLIT_MIN_ELEMENTS and not _may_overlap(dst_ap, src_ap):
            parts = _copy_parts(dst_ap.shape, self._strides(dst_ap), self._strides(src_ap))
        if parts is None:
            return lambda: np.copyto(dst(), src())

        def step():
            d, s = dst(), src()
            for part in parts:
                np.copyto(d[part], s[part])
        return step

    def _strides(self, ap: AccessPattern) -> tuple:
        """The byte strides of a direct access pattern's view (those of ``_view``, known before any run)."""
        if ap.is_sbuf:
            return self._sbuf_view(ap).strides
        return tuple(s * ap.dtype.itemsize for s, _ in ap.pattern)

    def _bits_view(self, ap: AccessPattern, into_other_tile: bool = False):
        """A function giving ``_bits`` of the view of a direct access pattern (what a DMA copies), made at once.

        HBM storage is a C-contiguous 1-D array in every run, so ``np.ndarray`` on it
        with the pattern's strides is the view; far cheaper than slicing, reshaping
        or ``as_strided`` and then reinterpreting. A source copied ``into_other_tile``
        (one it does not overlap) is read as ``_source_view``.
        """
        if ap.is_sbuf:
            v = _bits(self._source_view(ap) if into_other_tile else self._sbuf_view(ap))
            return lambda: v
        slot, shape, item, mem = self.slot[ap.tensor], ap.shape, ap.dtype.itemsize, self.mem
        bits, offset, strides = _BITS[item], ap.offset * item, tuple([s * item for s, _ in ap.pattern])
        return lambda: np.ndarray(shape, bits, buffer=mem[slot], offset=offset, strides=strides)

    def _gather(self, n: int, inst: DmaCopy, dst):
        """dst[i, ...] = src[offset + vector_offset[i] * row_size + free offsets], bounds-checked per run."""
        ap, mem = inst.src, self.mem
        slot, o, rs = self.slot[ap.tensor], ap.offset, ap.row_size
        index = self._sbuf_view(ap.vector_offset).reshape(-1)
        size = ap.tensor.size
        span = ap.free_span()
        rest, shape = ap.pattern[1:], ap.shape

        def check(idx):
            lo = o + int(idx.min()) * rs
            hi = o + int(idx.max()) * rs + span
            if lo < 0 or hi >= size:
                start = o + idx.astype(np.int64) * rs
                i = int(np.nonzero((start < 0) | (start + span >= size))[0][0])
                raise OutOfBoundsError(
                    f"instruction {n} (dma_copy gather from {ap.tensor.name}): partition {i} reads elements "
                    f"{start[i]}..{start[i] + span} (vector_offset {int(idx[i])} * row size {rs} + offset {o}), "
                    f"outside the tensor's elements 0..{size - 1}")

        # Every partition reads the same free pattern from the start of its row, so the tensor seen as rows
        # (row r: the pattern from element c0 + r * rs) is one strided view, and the gather indexes its first
        # axis: out[i] = rows[r0 + index[i]]. ``count`` rows start in the tensor with the pattern inside it; the
        # bounds check admits exactly these (o + index * rs = c0 + (r0 + index) * rs).
        r0, c0 = divmod(o, rs)
        count = max(0, (size - 1 - c0 - span) // rs + 1)
        item, bits = ap.dtype.itemsize, _BITS[ap.dtype.itemsize]
        strides = (rs * item, *[s * item for s, _ in rest])
        row_bytes = math.prod(shape[1:]) * item
        last = [None, None]  # the last index's bytes (checked) and its copies: an index tile rarely changes

        def copies(idx: np.ndarray):
            """The copies gathering rows ``idx`` (``_row_copies``) where they move enough bytes each to beat one
            fancy index, which gathers into a temporary first; else ``idx`` itself (also in a first run, and when
            the gather writes into its own source: all its reads come before its writes)."""
            if not self._repeated or inst.dst.tensor is ap.tensor:
                return idx
            parts = _row_copies(idx)
            return parts if row_bytes * len(idx) >= _RUN_BYTES * len(parts) else idx

        def step():
            key = index.tobytes()
            if key != last[0]:
                check(index)
                last[:] = key, copies(index.astype(np.intp) + r0)
            rows = np.ndarray((count, *shape[1:]), bits, buffer=mem[slot], offset=c0 * item, strides=strides)
            out, how = dst(), last[1]
            if type(how) is list:
                for part, source in how:
                    out[part] = rows[source]
            elif rows.flags.c_contiguous and out.flags.c_contiguous:
                np.take(rows, how, axis=0, out=out, mode="clip")  # in bounds: checked above
            else:
                out[...] = rows[how]
        return step

    # -- memset and DMA with accumulate ------------------------------------------------------------
    def _memset(self, n: int, inst: Memset):
        dst = self._sbuf_view(inst.dst)
        values = dtypes.cast(np.full(dst.shape, inst.value, np.float32), dst.dtype)
        return lambda: np.copyto(dst, values)

    def _dma_copy_add(self, n: int, inst: DmaCopyAdd):
        """dst += src in float32, every duplicate address counting (see DmaCopyAdd)."""
        ap, mem, src = inst.dst, self.mem, self._view(inst.src)
        slot, dtype, o = self.slot[ap.tensor], ap.dtype, ap.offset
        free = np.zeros((1,), np.int64)
        for s, num in ap.pattern[1:]:
            free = (free[:, None] + s * np.arange(num, dtype=np.int64)[None, :]).reshape(-1)

        def add(target, key, values, repeats=None):
            """target[key] += values in order, every repeat of a key counting (one pass per repeat, or at once)."""
            repeats = _Repeats(key) if repeats is None else repeats
            with np.errstate(over="ignore", invalid="ignore"):  # inf - inf is NaN, as the hardware adds
                if repeats.most > 8 and dtype == np.float32 and repeats.accumulate(target, values):
                    return
                for sel in repeats.passes:
                    k = key[sel]
                    target[k] = dtypes.cast(dtypes.to_f32(target[k]) + dtypes.to_f32(values[sel]), dtype)

        if ap.indirect_dim is None:  # static addresses: the passes are known now
            addr = (o + ap.pattern[0][0] * np.arange(ap.shape[0], dtype=np.int64))[:, None] + free[None, :]
            addr = addr.reshape(-1)
            repeats = _Repeats(addr)
            return lambda: add(mem[slot], addr, src().reshape(-1), repeats)

        index = self._sbuf_view(ap.vector_offset).reshape(-1)
        rs, span, size = ap.row_size, ap.free_span(), ap.tensor.size

        def check(idx):
            start = o + idx.astype(np.int64) * rs
            bad = np.nonzero((start < 0) | (start + span >= size))[0]
            if bad.size:
                i = int(bad[0])
                raise OutOfBoundsError(
                    f"instruction {n} (dma_copy_add scatter into {ap.tensor.name}): partition {i} writes elements "
                    f"{start[i]}..{start[i] + span} (vector_offset {int(idx[i])} * row size {rs} + offset {o}), "
                    f"outside the tensor's elements 0..{size - 1}")
            return start

        rest = ap.pattern[1:]
        if len(rest) == 1 and rest[0][0] == 1 and o % rs + rest[0][1] <= rs and size % rs == 0:
            # Fast path: each partition adds into a contiguous run within one row; repeats are whole rows.
            r0, c0, width = o // rs, o % rs, rest[0][1]

            def step():
                check(index)
                add(mem[slot].reshape(-1, rs)[:, c0:c0 + width], index.astype(np.intp) + r0, src())
            return step

        def step():
            addr = (check(index)[:, None] + free[None, :]).reshape(-1)
            add(mem[slot], addr, src().reshape(-1))
        return step


Executable._PREPARE = {
    Iota: Executable._iota, AffineSelect: Executable._affine_select, TensorScalar: Executable._tensor_scalar, TensorTensor: Executable._tensor_tensor,
    TensorCopy: Executable._tensor_copy, TensorReduce: Executable._tensor_reduce, Select: Executable._select, CopyPredicated: Executable._copy_predicated, NcNGather: Executable._nc_n_gather, Activation: Executable._activation, Memset: Executable._memset,
    DmaCopy: Executable._dma_copy, DmaCopyAdd: Executable._dma_copy_add,
    NcMatmul: Executable._nc_matmul, NcTranspose: Executable._nc_transpose, TensorTensorScan: Executable._tensor_tensor_scan,
    BnStats: Executable._bn_stats, BnAggr: Executable._bn_aggr, TensorPartitionReduce: Executable._tensor_partition_reduce,
    ScalarTensorTensor: Executable._scalar_tensor_tensor, Reciprocal: Executable._reciprocal,
}


class _NoPlan(Exception):
    """Raised inside Executable._poison_plan where it cannot say what a run reads first."""


def run(program: Program, inputs, poison_outputs: bool = True) -> list[np.ndarray]:
    """Execute ``program`` once on ``inputs``; see ``Executable`` for repeated runs."""
    return Executable(program).run(inputs, poison_outputs=poison_outputs)


__all__ = ["Executable", "run", "HbmTensor"]
