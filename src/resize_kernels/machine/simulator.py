"""Executes a Program on numpy storage, instruction by instruction, bit-exactly.

``Executable(program)`` prepares every instruction once (SBUF views, constant
iota values, gather geometry) so that running the same Program again costs only
the work itself; ``run(program, inputs)`` is the one-shot form. Engines compute
in float32 and cast their results (``dtypes.cast``); DMAs copy bits. Every
address is bounds-checked: direct patterns when the Program is traced, indirect
ones (which depend on data) here, as each gather runs.
"""

from __future__ import annotations

import functools
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
    NcNGather,
    Program,
    TensorCopy,
    TensorScalar,
    Select,
    TensorReduce,
    TensorTensor,
)
from .memory import NUM_PARTITIONS, POISON_BYTE, HbmTensor, check_host_memory, poisoned, sbuf_view

_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


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


class Executable:
    """A Program prepared for repeated execution on the simulated NeuronCore (one run at a time)."""

    def __init__(self, program: Program):
        self.program = program
        width = program.sbuf_partition_bytes + program.psum_high_water if program.psum_high_water else \
            program.sbuf_high_water  # PSUM tiles lie past the SBUF capacity
        self.sbuf = np.empty((NUM_PARTITIONS, max(width, 1)), np.uint8)
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
        check_host_memory(sum(t.size * t.dtype.itemsize for t in p.outputs + p.internal) + self.sbuf.nbytes,
                          f"simulating program {p.name}")
        with self._lock:
            for t, x in zip(p.inputs, inputs):
                if not isinstance(x, np.ndarray) or x.shape != t.shape or x.dtype != t.dtype:
                    got = f"{x.dtype}{list(x.shape)}" if isinstance(x, np.ndarray) else type(x).__name__
                    raise InvalidValueError(f"program {p.name} input {t} requires a "
                                            f"{t.dtype}{list(t.shape)} numpy array, got {got}")
                self.mem[self.slot[t]] = np.ascontiguousarray(x).reshape(-1)
            for t in p.outputs + p.internal:
                self.mem[self.slot[t]] = poisoned(t.size, t.dtype) if poison_outputs else np.empty(t.size, t.dtype)
            if p.sbuf_extents is None:
                self.sbuf.fill(POISON_BYTE)
            for partitions, start, end in p.sbuf_extents or ():  # where tiles lie: nothing else is ever read
                self.sbuf[:partitions, start:end].fill(POISON_BYTE)
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
        f, out_dtype, to_f32, cast = ALU_OPS[inst.op], dst.dtype, dtypes.to_f32, dtypes.cast
        kept = data.shape[:data.ndim - inst.axes]
        ordered = inst.op in ("add", "subtract", "multiply", "divide")  # float rounding depends on the order
        ufunc = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
                 "maximum": np.maximum, "max": np.maximum, "minimum": np.minimum, "min": np.minimum}.get(inst.op)
        sign = np.float32(-1 if inst.negate else 1)

        def step():
            x = to_f32(data).reshape(*kept, -1)
            with np.errstate(all="ignore"):
                if ufunc is None:  # an op without a numpy ufunc: fold it in order
                    y = x[..., 0]
                    for k in range(1, x.shape[-1]):
                        y = f(y, x[..., k])
                elif ordered:
                    y = ufunc.accumulate(x, axis=-1)[..., -1]
                else:
                    y = ufunc.reduce(x, axis=-1)
                y = np.asarray(y, np.float32) * sign
            np.copyto(dst, cast(y, out_dtype).reshape(dst.shape))
        return step

    def _activation(self, n: int, inst: Activation):
        dst, data = self._sbuf_view(inst.dst), self._sbuf_view(inst.data)
        f, out_dtype, to_f32, cast = ACTIVATION_FUNCS[inst.func], dst.dtype, dtypes.to_f32, dtypes.cast
        scale, bias = np.float32(inst.scale), np.float32(inst.bias)
        if scale == 1 and bias == 0:
            return lambda: np.copyto(dst, cast(f(to_f32(data)), out_dtype))
        return lambda: np.copyto(dst, cast(f(to_f32(data) * scale + bias), out_dtype))  # float32 throughout

    # -- DMA ---------------------------------------------------------------------------------
    def _dma_copy(self, n: int, inst: DmaCopy):
        dst = self._bits_view(inst.dst)
        if inst.src.indirect_dim is None:
            src = self._bits_view(inst.src)
            return lambda: np.copyto(dst(), src())
        return self._gather(n, inst, dst)

    def _bits_view(self, ap: AccessPattern):
        """A function giving ``_bits`` of the view of a direct access pattern (what a DMA copies), made at once.

        HBM storage is a C-contiguous 1-D array in every run, so ``np.ndarray`` on it
        with the pattern's strides is the view; far cheaper than slicing, reshaping
        or ``as_strided`` and then reinterpreting.
        """
        if ap.is_sbuf:
            v = _bits(self._sbuf_view(ap))
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
    Iota: Executable._iota, TensorScalar: Executable._tensor_scalar, TensorTensor: Executable._tensor_tensor,
    TensorCopy: Executable._tensor_copy, TensorReduce: Executable._tensor_reduce, Select: Executable._select, NcNGather: Executable._nc_n_gather, Activation: Executable._activation, Memset: Executable._memset,
    DmaCopy: Executable._dma_copy, DmaCopyAdd: Executable._dma_copy_add,
}


def run(program: Program, inputs, poison_outputs: bool = True) -> list[np.ndarray]:
    """Execute ``program`` once on ``inputs``; see ``Executable`` for repeated runs."""
    return Executable(program).run(inputs, poison_outputs=poison_outputs)


__all__ = ["Executable", "run", "HbmTensor"]
