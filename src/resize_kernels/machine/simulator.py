"""Executes a Program on numpy storage, instruction by instruction, bit-exactly.

``Executable(program)`` prepares every instruction once (SBUF views, constant
iota values, gather geometry) so that running the same Program again costs only
the work itself; ``run(program, inputs)`` is the one-shot form. Engines compute
in float32 and cast their results (``dtypes.cast``); DMAs copy bits. Every
address is bounds-checked: direct patterns when the Program is traced, indirect
ones (which depend on data) here, as each gather runs.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ..errors import InvalidTypeError, InvalidValueError
from . import dtypes
from .access import AccessPattern
from .errors import OutOfBoundsError
from .isa import (
    ACTIVATION_FUNCS,
    ALU_OPS,
    Activation,
    DmaCopy,
    DmaCopyAdd,
    Iota,
    Memset,
    Program,
    TensorCopy,
    TensorScalar,
    TensorTensor,
)
from .memory import NUM_PARTITIONS, POISON_BYTE, HbmTensor, poisoned, sbuf_view

_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bits(a: np.ndarray) -> np.ndarray:
    """Reinterpret as unsigned integers of the same width, so that copies move bits, never values."""
    return a.view(_BITS[a.dtype.itemsize])


def _repeat_passes(key: np.ndarray) -> list:
    """Split positions 0..len(key)-1 into passes of distinct keys: pass m holds every key's m-th occurrence.

    Running the passes in order adds the contributions to each address in their
    original order, and each pass is a plain (duplicate-free) fancy-index update.
    """
    order = np.argsort(key, kind="stable")
    ranked = key[order]
    first = np.ones(len(key), bool)
    first[1:] = ranked[1:] != ranked[:-1]
    if first.all():
        return [slice(None)]
    pos = np.arange(len(key))
    rank = np.empty(len(key), np.intp)
    rank[order] = pos - np.maximum.accumulate(np.where(first, pos, 0))
    return [np.nonzero(rank == m)[0] for m in range(int(rank.max()) + 1)]


class Executable:
    """A Program prepared for repeated execution on the simulated NeuronCore (one run at a time)."""

    def __init__(self, program: Program):
        self.program = program
        self.sbuf = np.empty((NUM_PARTITIONS, max(program.sbuf_high_water, 1)), np.uint8)
        tensors = program.inputs + program.outputs + program.internal
        self.slot = {t: n for n, t in enumerate(tensors)}
        self.mem: list[np.ndarray | None] = [None] * len(tensors)
        self._views: dict[AccessPattern, np.ndarray] = {}
        self.steps = [self._prepare(n, inst) for n, inst in enumerate(program.instructions)]
        self._lock = threading.Lock()

    # -- running ---------------------------------------------------------------------------------
    def run(self, inputs, poison_outputs: bool = True) -> list[np.ndarray]:
        """Run on ``inputs`` (numpy arrays matching the Program's inputs); return the outputs."""
        p = self.program
        if len(inputs) != len(p.inputs):
            raise InvalidValueError(f"program {p.name} takes {len(p.inputs)} inputs "
                             f"({', '.join(t.name for t in p.inputs)}), got {len(inputs)}")
        with self._lock:
            for t, x in zip(p.inputs, inputs):
                if not isinstance(x, np.ndarray) or x.shape != t.shape or x.dtype != t.dtype:
                    got = f"{x.dtype}{list(x.shape)}" if isinstance(x, np.ndarray) else type(x).__name__
                    raise InvalidValueError(f"program {p.name} input {t} requires a "
                                     f"{t.dtype}{list(t.shape)} numpy array, got {got}")
                self.mem[self.slot[t]] = np.ascontiguousarray(x).reshape(-1)
            for t in p.outputs + p.internal:
                self.mem[self.slot[t]] = poisoned(t.size, t.dtype) if poison_outputs else np.empty(t.size, t.dtype)
            self.sbuf.fill(POISON_BYTE)
            for step in self.steps:
                step()
            outs = [self.mem[self.slot[t]].reshape(t.shape) for t in p.outputs]
            self.mem[:] = [None] * len(self.mem)  # in place: the prepared steps hold this list
        return outs

    # -- preparing ---------------------------------------------------------------------------------
    def _prepare(self, n: int, inst):
        prepare = self._PREPARE.get(type(inst))
        if prepare is None:
            raise InvalidTypeError(f"the simulator cannot execute instruction {n}: {type(inst).__name__}")
        return prepare(self, n, inst)

    def _sbuf_view(self, ap: AccessPattern) -> np.ndarray:
        """A numpy view of a direct SBUF access pattern (prepared once per pattern)."""
        view = self._views.get(ap)
        if view is None:
            view = self._views[ap] = self._make_sbuf_view(ap)
        return view

    def _make_sbuf_view(self, ap: AccessPattern) -> np.ndarray:
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
        strides = tuple(s * item for s, _ in ap.pattern)
        return lambda: np.lib.stride_tricks.as_strided(mem[slot][o:], shape=shape, strides=strides)

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

    def _tensor_scalar(self, n: int, inst: TensorScalar):
        dst, data = self._sbuf_view(inst.dst), self._sbuf_view(inst.data)
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

    def _tensor_tensor(self, n: int, inst: TensorTensor):
        dst, a, b = self._sbuf_view(inst.dst), self._sbuf_view(inst.data1), self._sbuf_view(inst.data2)
        f, out_dtype, to_f32, cast = ALU_OPS[inst.op], dst.dtype, dtypes.to_f32, dtypes.cast
        return lambda: np.copyto(dst, cast(f(to_f32(a), to_f32(b)), out_dtype))

    def _tensor_copy(self, n: int, inst: TensorCopy):
        dst, src = self._sbuf_view(inst.dst), self._sbuf_view(inst.src)
        if dst.dtype == src.dtype:
            d, s = _bits(dst), _bits(src)
            return lambda: np.copyto(d, s)
        out_dtype, to_f32, cast = dst.dtype, dtypes.to_f32, dtypes.cast
        return lambda: np.copyto(dst, cast(to_f32(src), out_dtype))

    def _activation(self, n: int, inst: Activation):
        dst, data = self._sbuf_view(inst.dst), self._sbuf_view(inst.data)
        f, out_dtype, to_f32, cast = ACTIVATION_FUNCS[inst.func], dst.dtype, dtypes.to_f32, dtypes.cast
        return lambda: np.copyto(dst, cast(f(to_f32(data)), out_dtype))

    # -- DMA ---------------------------------------------------------------------------------
    def _dma_copy(self, n: int, inst: DmaCopy):
        dst = self._view(inst.dst)
        if inst.src.indirect_dim is None:
            src = self._view(inst.src)
            return lambda: np.copyto(_bits(dst()), _bits(src()))
        return self._gather(n, inst, dst)

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

        if (rest[-1][0] == 1 and o % rs + rest[-1][1] <= rs and size % rs == 0
                and all(s % rs == 0 for s, _ in rest[:-1])):
            # Fast path: every element run is contiguous within one row of the indexed tensor, and the outer
            # free pairs step by whole rows: a gather of rows by a (P, n1, ...) row index.
            r0, c0, width = o // rs, o % rs, rest[-1][1]
            row_steps = np.zeros((1,), np.intp)
            for s, num in rest[:-1]:
                row_steps = (row_steps[:, None] + (s // rs) * np.arange(num, dtype=np.intp)[None, :]).reshape(-1)
            outer = shape[:-1]

            def step():
                check(index)
                rows = _bits(mem[slot]).reshape(-1, rs)
                idx = ((index.astype(np.intp) + r0)[:, None] + row_steps[None, :]).reshape(outer)
                out = _bits(dst())
                if c0 == 0 and width == rs and out.flags.c_contiguous:
                    np.take(rows, idx, axis=0, out=out, mode="clip")  # in bounds: checked above
                else:
                    out[...] = rows[idx, c0:c0 + width]
            return step

        free = np.zeros((1,), np.int64)
        for s, num in rest:
            free = (free[:, None] + s * np.arange(num, dtype=np.int64)[None, :]).reshape(-1)

        def step():
            check(index)
            addr = (o + index.astype(np.int64) * rs)[:, None] + free[None, :]
            np.copyto(_bits(dst()), _bits(mem[slot])[addr].reshape(shape))
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

        def add(target, key, values, passes=None):
            """target[key] += values, one pass per repeat of a key so that no contribution is lost."""
            for sel in _repeat_passes(key) if passes is None else passes:
                k = key[sel]
                target[k] = dtypes.cast(dtypes.to_f32(target[k]) + dtypes.to_f32(values[sel]), dtype)

        if ap.indirect_dim is None:  # static addresses: the passes are known now
            addr = (o + ap.pattern[0][0] * np.arange(ap.shape[0], dtype=np.int64))[:, None] + free[None, :]
            addr = addr.reshape(-1)
            passes = _repeat_passes(addr)
            return lambda: add(mem[slot], addr, src().reshape(-1), passes)

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
    Iota: Executable._iota, TensorScalar: Executable._tensor_scalar, TensorTensor: Executable._tensor_tensor,
    TensorCopy: Executable._tensor_copy, Activation: Executable._activation, Memset: Executable._memset,
    DmaCopy: Executable._dma_copy, DmaCopyAdd: Executable._dma_copy_add,
}


def run(program: Program, inputs, poison_outputs: bool = True) -> list[np.ndarray]:
    """Execute ``program`` once on ``inputs``; see ``Executable`` for repeated runs."""
    return Executable(program).run(inputs, poison_outputs=poison_outputs)


__all__ = ["Executable", "run", "HbmTensor"]
