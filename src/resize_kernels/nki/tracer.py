"""The tracer: running a kernel function once under a tracing context records a Program.

As in NKI's tracer frontend, Python control flow runs at trace time: loops are
unrolled, shapes and scales are Python values, and every nisa call appends one
instruction. SBUF tiles allocated in an ``affine_range`` iteration take turns in
two rotating buffers, as NKI's allocator gives them; a sequential loop's reuse
one. The blocks of tiles with block dimensions get storage when the trace ends,
each from its first write to its last use (``Tracer.finish``), as do tiles the
stack cannot hold; blocks past SBUF's capacity are spilled to HBM by DMAs the
Program shows (``Tracer._spill``). A copy that
only moves an instruction's fresh result into the tile it is assigned to
(``tile[...] = nisa.exp(...)``) is folded into that instruction, as NKI's
compiler writes such results in place.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
import functools
import gc
import inspect
import itertools
import math
import os
import sys
import threading
import types
from copy import copy as shallow_copy

import numpy as np


from ..errors import InstructionBudgetError, InvalidTypeError, InvalidValueError
from ..machine import dtypes
from ..machine.access import AccessPattern
from ..machine.isa import DmaCopy, DmaCopyAdd, Instruction, NcMatmul, Program, TensorTensor
from ..machine.errors import SbufCapacityError
from .allocation import check_direct
from ..machine.memory import (DEFAULT_SBUF_PARTITION_BYTES, MODIFIES, OVERWRITES, PSUM_PARTITION_BYTES,
                              READS, SBUF_ALIGNMENT, HbmTensor, Lifetime, SbufAllocator, SbufTile, extents,
                              place_blocks, plan_spills)
from .tensor import NkiTensor

_state = threading.local()
#: Frames in this package are the API's own; the first frame outside it issued the instruction.
_NKI_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

#: Instructions one trace may emit: a kernel that unrolls per tile stops here on a large shape instead of running
#: for minutes while memory grows. (The seed's kernel on 1x512x512x64 -> 1024x1024 needs 278,528.)
MAX_INSTRUCTIONS = 300_000
#: Instructions a cost-only trace (``nki.benchmark``) may emit: it computes no element, so the Program is all it
#: holds; nki-samples' flash_attn_bwd perf shapes fit, with room to spare (benchmarks/cost_only_scale.py measures
#: what each needs).
COST_ONLY_MAX_INSTRUCTIONS = 2_500_000
#: What tracing a kernel and costing its Program take per instruction emitted, at most about (the largest of
#: benchmarks/cost_only_scale.py's figures): what a budget bounds, as its error says.
SECONDS_PER_INSTRUCTION = 70e-6
BYTES_PER_INSTRUCTION = 1000


def budget_error(name: str, budget: int) -> InstructionBudgetError:
    """The error of a trace of ``name`` past ``budget`` instructions (raised by the tracer, or before tracing where a
    kernel's lower bound already passes it)."""
    return InstructionBudgetError(
        f"tracing {name} needs more than {budget:,} instructions, the tracer's budget (tracing and costing that many "
        f"take up to about {budget * SECONDS_PER_INSTRUCTION:,.0f} s and {budget * BYTES_PER_INSTRUCTION / 1e9:.1f} "
        f"GB); a kernel that unrolls a loop per tile grows with its data: trace a smaller shape or a kernel with "
        f"fewer, larger tiles")


class Tracer:
    """What one trace builds: the Program, the SBUF allocator, unique names."""

    def __init__(self, name: str, sbuf_partition_bytes: int, max_instructions: int, sources: bool = True):
        self.sources = sources
        self.allocator = SbufAllocator(sbuf_partition_bytes)
        self.psum_allocator = SbufAllocator(PSUM_PARTITION_BYTES, psum_base=sbuf_partition_bytes)
        self.program = Program(name, sbuf_partition_bytes=sbuf_partition_bytes)
        self.max_instructions = max_instructions
        self._counters: dict[str, itertools.count] = {}
        # SPMD (``kernel[grid]``): the instance being traced, the grid, and the shared HBM tensors by order of
        # creation: the k-th ``nl.ndarray(buffer=nl.shared_hbm)`` of every instance is the first instance's k-th.
        self.program_id: tuple = ()
        self.grid: tuple = ()
        self.shared: list = []
        self.shared_index = 0
        self.blocks: dict = {}  # block tile -> the key of its tensor (blocks of one tensor are double-buffered)
        self.fresh: dict = {}  # tile -> (the instruction that wrote it, the box it wrote): an unread fresh result
        self.assignments: list = []  # (producer, copy, tile): copies of fresh results into assigned tiles
        self.accumulations: list = []  # (producer, add, tile): fresh results added into tiles (x += result)
        self.direct: set = set()  # tiles the kernel placed itself (ncc.sbuf/psum.alloc, mod_alloc)
        self.platform = "trn1"  # the platform compiled for (trn1 or trn2: nisa.get_nc_version)
        self.loops: list = []  # symbolic loops being unrolled, outermost first: [token, {line: executions}]
        self.loop_buffers: dict = {}  # (outermost loop token, line, k) -> the direct allocation made there first

    def unique(self, base: str) -> str:
        counter = self._counters.setdefault(base, itertools.count())
        return f"{base}.{next(counter)}"

    def emit(self, inst: Instruction) -> None:
        if len(self.program.instructions) >= self.max_instructions:
            raise budget_error(self.program.name, self.max_instructions)
        if self.sources:  # the kernel's source line, as NKI's debug info gives it (about 10% of tracing)
            inst.source = kernel_line()
        self.program.append(inst)

    def hbm(self, name: str, shape, dtype, kind: str, data=None) -> NkiTensor:
        tensor = HbmTensor(name, tuple(int(s) for s in shape), dtypes.as_dtype(dtype), kind, data)
        {"input": self.program.inputs, "internal": self.program.internal,
         "constant": self.program.constants}[kind].append(tensor)
        return NkiTensor(tensor)

    def sbuf(self, name: str | None, shape, dtype, memory: str = "sbuf") -> NkiTensor:
        """A tile on the stack (freed with the loop iteration that allocated it); when the stack is full, a tile
        placed after the trace from its first write to its last use, as NKI's allocator gives every tile storage
        (a loop in plain Python ``range`` frees nothing on the stack, but its tiles die each iteration)."""
        allocator = self.allocator if memory == "sbuf" else self.psum_allocator
        name, shape, dtype = self.unique(name or "t"), tuple(map(int, shape)), dtypes.as_dtype(dtype)
        try:
            tile = allocator.allocate(name, shape, dtype)
        except SbufCapacityError:
            if math.prod(shape[1:]) * dtype.itemsize > allocator.capacity:
                raise  # no lifetime makes it fit
            tile = self.block_tile(name, shape, dtype, memory, object())
        return NkiTensor(tile)

    def block_tile(self, name: str, shape, dtype, memory: str, tensor_key) -> SbufTile:
        """A new block's tile of the block tensor ``tensor_key`` (its storage is placed by ``finish``)."""
        allocator = self.allocator if memory == "sbuf" else self.psum_allocator
        tile = allocator.block_tile(name, tuple(map(int, shape)), dtypes.as_dtype(dtype))
        self.blocks[tile] = tensor_key
        return tile

    def traced_once(self, buffer):
        """The direct allocation ``buffer`` a kernel line inside symbolic loops (affine_range, sequential_range)
        gives, as NKI's front end, which traces such a loop body once, gives it: the k-th execution of a line
        in an iteration of its innermost loop takes what the k-th execution in the loops' first iteration
        took. (A body that moves Python state, ``cur_addr += size`` in nki-samples' allocated attention, moves
        it once there, but once per iteration when unrolled here.)"""
        if not self.loops:
            return buffer
        line, counts = kernel_line(), self.loops[-1][1]
        k = counts[line] = counts.get(line, -1) + 1
        return self.loop_buffers.setdefault((self.loops[0][0], line, k), buffer)

    def direct_tile(self, name: str, shape, dtype, buffer, idx: tuple) -> SbufTile:
        """Block ``idx``'s tile of a tensor the kernel places itself (``buffer``: an allocation.DirectAllocation),
        at the address its function gives; checked against other tiles' lives by ``finish``."""
        allocator = self.allocator if buffer.memory == "sbuf" else self.psum_allocator
        shape, dtype = tuple(map(int, shape)), dtypes.as_dtype(dtype)
        tile = allocator.block_tile(name, shape, dtype)
        tile.address = allocator.base + buffer.offset(tuple(idx), tile.partitions, tile.bytes_per_partition,
                                                      self.allocator.capacity)
        allocator.note(tile)
        self.direct.add(tile)
        return tile

    def mark_fresh(self, tile: SbufTile, box) -> None:
        """``tile`` is the fresh result of the last instruction (in ``box``, a mask's box, or None: whole)."""
        self.fresh[tile] = (self.program.instructions[-1] if box != () else None, box)

    def take_fresh(self, tile) -> tuple | None:
        """(producer, box) if ``tile`` is a fresh result not yet assigned anywhere; it is then no longer fresh."""
        return self.fresh.pop(tile, None)

    def note_assignment(self, producer: Instruction, tile: SbufTile) -> None:
        """The last instruction copied ``producer``'s fresh result ``tile`` into an assigned tile."""
        self.assignments.append((producer, self.program.instructions[-1], tile))

    def note_accumulation(self, producer: Instruction, tile: SbufTile) -> None:
        """The last instruction added ``producer``'s fresh result ``tile`` into a tile (``x += result``)."""
        self.accumulations.append((producer, self.program.instructions[-1], tile))

    def finish(self) -> None:
        """After the kernel ran: fold the copies of fresh results (``_fold_copies``), place the blocks, and measure
        what the instructions' tiles occupy (a folded result's tile is no longer used)."""
        if not (self.assignments or self.accumulations or self.blocks or self.direct):
            return
        if self.accumulations:
            self._fold_accumulations()
        if self.assignments:
            self._fold_copies()
        if self.direct:
            check_direct(((n, inst, ap.tensor) for n, inst in enumerate(self.program.instructions)
                          for ap in (*_writes(inst), *inst.sources()) if isinstance(ap.tensor, SbufTile)),
                         self.direct, self.psum_allocator.base)
        if self.blocks:
            self._place_blocks()
        for allocator in (self.allocator, self.psum_allocator):
            allocator.high_water, allocator.reach = 0, {}
        for inst in self.program.instructions:
            for ap in (*_writes(inst), *inst.sources()):
                if isinstance(ap.tensor, SbufTile):
                    (self.allocator if ap.tensor.memory == "sbuf" else self.psum_allocator).note(ap.tensor)

    def _fold_accumulations(self) -> None:
        """``psum[...] += nisa.nc_matmul(...)`` (classic NKI's accumulation into PSUM): the matmul writes psum
        itself and the add is dropped, where the add right after it sums exactly psum and the matmul's float32
        result and nothing else reads that result. Onto elements something wrote before, the matmul accumulates
        (PSUM's float32 sum: the add's bits); where nothing wrote psum yet, it overwrites, as the first matmul of
        an accumulation group does (the add would have read uninitialized memory)."""
        insts = self.program.instructions
        position = {id(inst): n for n, inst in enumerate(insts)}
        readers = _reader_counts(insts)
        plan = {}
        for producer, add, tile in self.accumulations:
            p = position.get(id(producer))
            if p is None or position.get(id(add)) != p + 1 or not isinstance(producer, NcMatmul) \
                    or producer.accumulate or readers.get(tile) != 1 or not isinstance(add, TensorTensor) \
                    or add.op != "add" or producer.dst.tensor is not tile:
                continue
            dst, made = add.dst, producer.dst
            keys = {(ap.tensor, ap.pattern, ap.offset, ap.dtype) for ap in (add.data1, add.data2)}
            if dst.tensor.memory == "psum" and keys == {(ap.tensor, ap.pattern, ap.offset, ap.dtype)
                                                         for ap in (dst, made)}:
                plan[p] = dst
        written: dict = {}
        targets = {dst.tensor for dst in plan.values()}
        dropped = set()
        for n, inst in enumerate(insts):
            dst = plan.get(n)
            if dst is not None:
                state = written.get(dst.tensor)
                seen = state is True or (state is not None and _elements(state, dst).all())
                if seen or state is None or not _elements(state, dst).any():
                    made, inst.dst, inst.accumulate = inst.dst, dst, seen
                    try:
                        inst.validate(f"instruction {n} ({inst.opcode})")
                        dropped.add(id(insts[n + 1]))
                    except ValueError:  # the matmul cannot write there: keep the add
                        inst.dst, inst.accumulate = made, False
            for ap in _writes(inst):
                if ap.tensor in targets:
                    written[ap.tensor] = _cover(written.get(ap.tensor), ap)
        if dropped:
            self.program.instructions = [inst for inst in insts if id(inst) not in dropped]

    def _fold_copies(self) -> None:
        """Make each producer write straight into the tile its fresh result was assigned to, and drop the copy,
        where the copy moves exactly what the producer wrote, nothing else reads the result, nothing between them
        touches either tile, and the producer reads the destination's tile only in place (``s[...] =
        nisa.tensor_scalar(s[...], ...)``: the very elements it writes). (``v[i] = nl.load(...)`` is
        then one DMA into v[i], as on the device.) Into another dtype, the producer writes that dtype: every
        engine casts its float32 result on output and a DMA casts too, so no intermediate rounding happens
        (kernels with direct allocation rely on it: ``act_f32[...] = nisa.activation(data=f16_tile)``)."""
        insts = self.program.instructions
        position = {id(inst): n for n, inst in enumerate(insts)}
        readers = _reader_counts(insts)
        dropped = set()
        for producer, copy, tile in self.assignments:
            p, c = position.get(id(producer)), position.get(id(copy))
            if p is None or c is None or copy.opcode != "tensor_copy" or readers.get(tile) != 1:
                continue
            src, dst, made = copy.src, copy.dst, producer.dst
            if made.tensor is not tile or (src.pattern, src.offset) != (made.pattern, made.offset):
                continue
            if any(ap.tensor is dst.tensor and (ap.pattern, ap.offset, ap.dtype) != (dst.pattern, dst.offset,
                                                                                    dst.dtype)
                   for ap in producer.sources()) or any(_touches(insts[k], (tile, dst.tensor))
                                                        for k in range(p + 1, c)):
                continue
            producer.dst = dst
            try:
                producer.validate(f"instruction {p} ({producer.opcode})")
            except ValueError:  # the producer cannot write there (a DMA into PSUM): keep the copy
                producer.dst = made
                continue
            dropped.add(id(copy))
        if dropped:
            self.program.instructions = [inst for inst in insts if id(inst) not in dropped]

    def _place_blocks(self) -> None:
        """Give every block storage for its lifetime, beside the other tiles (``memory.place_blocks``).

        A block lives from its first write to its last use. Reading a block before any instruction wrote what
        is read is an error: that storage may hold another block's data (NKI's allocator reuses it), so the
        simulator cannot give the bits the device would. Blocks of one tensor are kept apart while the next
        block of that tensor is being written (two buffers, as NKI's allocator gives them), where that fits;
        otherwise only their own lifetimes count. Where SBUF blocks live at once in trace order exceed the
        capacity even so, some are spilled to HBM and reloaded (``_spill``); PSUM blocks cannot be.
        """
        uses, tensors, fixed = self._block_uses(check=True)
        try:
            self._place("sbuf", uses, tensors, fixed["sbuf"], buffered=True)
        except SbufCapacityError as error:
            uses, tensors, fixed = self._spill_until_placed(uses, fixed["sbuf"], error)
        self._place("psum", uses, tensors, fixed["psum"], buffered=True)
        for tile in self.blocks:  # a block indexed but never used by an instruction: anywhere
            if tile.address is None:
                tile.address = (self.allocator if tile.memory == "sbuf" else self.psum_allocator).base

    def _block_uses(self, check: bool) -> tuple:
        """How the instructions use the blocks and the other tiles: (block -> [(instruction, READS / MODIFIES /
        OVERWRITES)], tensor key -> its blocks by first use, memory -> {other tile: Lifetime}). With ``check``,
        a read of a block where nothing was written yet is an error (``_check_written``)."""
        uses: dict = {}
        tensors = collections.defaultdict(list)
        fixed = {"sbuf": {}, "psum": {}}
        bases = {"sbuf": self.allocator.base, "psum": self.psum_allocator.base}
        written: dict = {}
        for n, inst in enumerate(self.program.instructions):
            read, wrote, whole = set(), set(), set()
            for ap in inst.sources() + ((inst.dst,) if _reads_destination(inst) else ()):
                tile = ap.tensor
                if tile in self.blocks:
                    if check:
                        _check_written(written.get(tile), ap, n, inst)
                    read.add(tile)
                elif isinstance(tile, SbufTile):
                    _use(fixed[tile.memory], tile, n, bases[tile.memory])
            for dst in _writes(inst):
                tile = dst.tensor
                if tile in self.blocks:
                    if check:
                        written[tile] = _cover(written.get(tile), dst)
                    wrote.add(tile)
                    if _whole(dst):
                        whole.add(tile)
                elif isinstance(tile, SbufTile):
                    _use(fixed[tile.memory], tile, n, bases[tile.memory])
            for tile in read | wrote:
                kind = READS if tile not in wrote else OVERWRITES if tile in whole and tile not in read else MODIFIES
                if tile not in uses:
                    uses[tile] = []
                    tensors[self.blocks[tile]].append(tile)
                uses[tile].append((n, kind))
        return uses, tensors, fixed

    def _place(self, memory: str, uses: dict, tensors: dict, fixed: dict, buffered: bool) -> None:
        """Place ``memory``'s blocks, each from its first write to its last use; with ``buffered``, first try
        keeping block k of a tensor until block k + 1 is first written (double buffering)."""
        allocator = self.allocator if memory == "sbuf" else self.psum_allocator
        tiles = [t for t in uses if t.memory == memory]
        lifetimes = {t: Lifetime(t.footprint, uses[t][0][0], uses[t][-1][0], name=t.name) for t in tiles}
        own = {t: lifetimes[t].last for t in tiles}
        kept = dict(own)
        for blocks in tensors.values():
            for a, b in itertools.pairwise(blocks):
                if a in kept:
                    kept[a] = max(own[a], lifetimes[b].first)
        stack = list(fixed.values())
        for last in ((kept, own) if buffered else (own,)):
            for t in tiles:
                lifetimes[t].last = last[t]
            try:
                place_blocks(allocator.capacity, stack, [lifetimes[t] for t in tiles], memory.upper())
                break
            except SbufCapacityError:
                if last is own:
                    raise
        for t in tiles:
            allocator.place(t, lifetimes[t].offset)

    #: Tries of ``_spill_until_placed``: each plans with one more block's bytes kept free (room lost to gaps).
    SPILL_TRIES = 8

    def _spill_until_placed(self, uses: dict, fixed: dict, error: SbufCapacityError) -> tuple:
        """Spill SBUF blocks (``_spill``) until they can be placed, and return the new Program's ``_block_uses``.
        The spills are planned on the bytes live at once; when the blocks then do not fit the gaps the stack's
        tiles leave, plan again with less room."""
        original, blocks, internal = self.program.instructions, dict(self.blocks), list(self.program.internal)
        step = max([t.footprint for t in uses if t.memory == "sbuf"] + [SBUF_ALIGNMENT])
        for attempt in range(self.SPILL_TRIES):
            self.program.instructions, self.blocks, self.program.internal = original, dict(blocks), list(internal)
            budget = self.allocator.capacity - attempt * step
            if budget < step:
                break
            try:
                self._spill(uses, fixed, budget)
            except SbufCapacityError:
                if attempt == 0:
                    raise  # one instruction's blocks alone do not fit: the message says what to change
                break
            new_uses, tensors, new_fixed = self._block_uses(check=False)
            try:
                self._place("sbuf", new_uses, tensors, new_fixed["sbuf"], buffered=False)
                return new_uses, tensors, new_fixed
            except SbufCapacityError as e:
                error = e
        raise error

    def _spill(self, uses: dict, fixed: dict, budget: int) -> None:
        """Rewrite the Program so that its SBUF blocks live at once fit in ``budget`` bytes per partition: where
        ``memory.plan_spills`` cuts a block's life, the piece after the cut is a new tile, loaded by a DMA from
        an HBM tensor ``_spill_<block>`` (the tile is ``_reload_<block>.<k>``) just before its first use, and
        the piece before it is stored there by a DMA just after its last use if it wrote the block. A piece
        starting with an overwrite of the whole block needs neither (the tile is ``<block>.<k>``)."""
        insts = self.program.instructions
        blocks = [t for t in uses if t.memory == "sbuf"]
        cuts = plan_spills(budget, list(fixed.values()), [uses[t] for t in blocks],
                           [t.footprint for t in blocks], describe=lambda n: _describe(n, insts[n]),
                           names=[t.name for t in blocks])
        before, after = collections.defaultdict(list), collections.defaultdict(list)
        moved = collections.defaultdict(dict)  # instruction -> {block: the tile of its piece there}
        for block, block_cuts in zip(blocks, cuts):
            if not block_cuts:
                continue
            u, spill = uses[block], None
            starts = [0, *block_cuts, len(u)]
            previous = None
            for k, (a, b) in enumerate(itertools.pairwise(starts)):
                reload = k > 0 and u[a][1] != OVERWRITES
                if k == 0:
                    tile = block
                else:
                    tile = SbufTile(f"{'_reload_' if reload else ''}{block.name}.{k}", block.partitions,
                                    block.free_shape, block.dtype, None, block.memory)
                    self.blocks[tile] = object()
                    for n, _ in u[a:b]:
                        moved[n][block] = tile
                if reload:
                    if spill is None:
                        spill = self.hbm(f"_spill_{block.name}", (block.partitions, block.free_size), block.dtype,
                                         "internal").storage
                    p_tile, p_a, p_b = previous
                    if p_a == 0 or any(kind != READS for _, kind in u[p_a:p_b]):  # it wrote: HBM is behind
                        after[u[p_b - 1][0]].append(_spill_dma(spill, p_tile, insts[u[p_b - 1][0]]))
                    before[u[a][0]].append(_spill_dma(tile, spill, insts[u[a][0]]))
                previous = (tile, a, b)
        program = []
        for n, inst in enumerate(insts):
            program += before.get(n, ())
            program.append(_retarget(inst, moved[n], n) if n in moved else inst)
            program += after.get(n, ())
        self.program.instructions = program

    def mark(self) -> tuple:
        """The allocators' state, to release what is allocated after it (a loop iteration's tiles)."""
        return self.allocator.mark(), self.psum_allocator.mark()

    def rotate(self, base: tuple, n: int, spans: tuple, buffers: int) -> tuple:
        """Start affine_range iteration ``n`` in rotating buffers (see nl.affine_range); returns the slots' starts."""
        return (self.allocator.rotate(base[0], n, spans[0], buffers),
                self.psum_allocator.rotate(base[1], n, spans[1], buffers))

    def peaks(self, reset: tuple | None = None) -> tuple:
        """The allocators' high-water marks; with ``reset``, set them to it first and return the old ones (to
        measure the peak of one loop iteration, tiles of inner loops included)."""
        old = (self.allocator.high_water, self.psum_allocator.high_water)
        if reset is not None:
            self.allocator.high_water, self.psum_allocator.high_water = reset
        return old

    def release(self, mark: tuple) -> None:
        self.allocator.release(mark[0])
        self.psum_allocator.release(mark[1])


def _reader_counts(insts: list) -> dict:
    """tile -> how many operands of the instructions read it."""
    readers: dict = {}
    for inst in insts:
        for ap in inst.sources():
            readers[ap.tensor] = readers.get(ap.tensor, 0) + 1
    return readers


def _reads_destination(inst: Instruction) -> bool:
    """Whether an instruction reads its destination (a DMA read-modify-write, an accumulating matmul)."""
    return bool(getattr(inst, "reads_dst", False)) or isinstance(inst, DmaCopyAdd)


def _writes(inst: Instruction) -> tuple:
    """What an instruction writes: its destination(s)."""
    destinations = getattr(inst, "destinations", None)
    return destinations() if destinations is not None else (inst.dst,)


def _touches(inst: Instruction, tiles: tuple) -> bool:
    return any(ap.tensor in tiles for ap in (*_writes(inst), *inst.sources()))


def _use(lifetimes: dict, tile: SbufTile, n: int, base: int) -> None:
    """Record that instruction n uses a (stack-allocated) tile, at its address less its memory's ``base``."""
    life = lifetimes.get(tile)
    if life is None:
        lifetimes[tile] = Lifetime(tile.footprint, n, n, tile.address - base)
    else:
        life.last = n


def _whole(ap) -> bool:
    """Whether a direct pattern writes every element of its tile, once each, in order."""
    tile = ap.tensor
    return (ap.offset == 0 and ap.size == tile.partitions * tile.free_size and ap.indirect_dim is None
            and all(step == math.prod(ap.shape[k + 1:]) for k, (step, _) in enumerate(ap.pattern)))


def _whole_pattern(tensor) -> AccessPattern:
    """All of an SBUF tile, or of an HBM tensor of shape (partitions, free size), row by row."""
    rows, size = (tensor.partitions, tensor.free_size) if isinstance(tensor, SbufTile) else tensor.shape
    return AccessPattern(tensor, ((size, rows), (1, size)))


def _spill_dma(dst, src, near: Instruction) -> DmaCopy:
    """A DMA of a whole block between SBUF and its spill tensor in HBM (issued beside ``near``, whose source
    line it takes)."""
    dma = DmaCopy(_whole_pattern(dst), _whole_pattern(src))
    dma.validate(f"the spill DMA {dst.name} <- {src.name}")
    dma.source = near.source
    return dma


def _retarget(inst: Instruction, moved: dict, n: int) -> Instruction:
    """A copy of ``inst`` using, for each block in ``moved``, the tile given for it there."""
    copied = shallow_copy(inst)
    for f in dataclasses.fields(inst):
        value = getattr(inst, f.name)
        if isinstance(value, AccessPattern):
            setattr(copied, f.name, _moved(value, moved))
    copied.validate(f"instruction {n} ({inst.opcode})")
    return copied


def _moved(ap: AccessPattern, moved: dict) -> AccessPattern:
    tensor = moved.get(ap.tensor, ap.tensor)
    vector = ap.vector_offset if ap.vector_offset is None else _moved(ap.vector_offset, moved)
    if tensor is ap.tensor and vector is ap.vector_offset:
        return ap
    return AccessPattern(tensor, ap.pattern, ap.offset, vector, ap.indirect_dim, ap.row_size)


def _describe(n: int, inst: Instruction) -> str:
    where = "" if inst.source is None else f", {os.path.basename(inst.source[0])}:{inst.source[1]}"
    return f"instruction {n} ({inst.opcode}{where})"




def _cover(state, ap):
    """What of a block has been written, after a write of ``ap``: True (all of it) or a flat bool mask."""
    if state is True:
        return True
    tile = ap.tensor
    size = tile.partitions * tile.free_size
    if _whole(ap):
        return True
    mask = np.zeros(size, bool) if state is None else state
    if ap.indirect_dim is not None:
        return mask
    _elements(mask, ap)[...] = True
    return True if mask.all() else mask


def _elements(mask: np.ndarray, ap) -> np.ndarray:
    return np.ndarray(ap.shape, bool, buffer=mask, offset=ap.offset, strides=[step for step, _ in ap.pattern])


def _check_written(state, ap, n: int, inst: Instruction) -> None:
    """A read of a block must find what it reads written since the block's storage was given (its first write)."""
    if state is True or (state is not None and _elements(state, ap).all()):
        return
    where = "" if inst.source is None else f", {os.path.basename(inst.source[0])}:{inst.source[1]}"
    what = "before any instruction wrote it" if state is None else "where no instruction wrote it yet"
    raise InvalidValueError(
        f"instruction {n} ({inst.opcode}{where}) reads {ap.describe()}, a block of a tile with block dimensions (or a "
        f"tile the stack could not hold), {what}: NKI's allocator gives a block storage from its first write to its "
        f"last use (the block dimension is logical, NKI Block Dimension Migration Guide), so what it holds before is "
        f"another block's; write the block first (nl.load, nl.zeros, a memset) or mask the read to what was written")


def kernel_line() -> tuple | None:
    """(file, line) of the kernel code calling into this package (the first frame outside it)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_NKI_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    if len(code.co_code) < _LONG_CODE:
        return code.co_filename, frame.f_lineno
    return code.co_filename, _line_at(code, frame.f_lasti)


#: Code objects longer than this (bytes) find a frame's line by bisection in their line table: frame.f_lineno scans
#: the table from the start, which made tracing an unrolled kernel (an exported file: one line per instruction)
#: quadratic in its length.
_LONG_CODE = 1 << 14


@functools.lru_cache(maxsize=64)
def _line_table(code) -> tuple:
    starts, lines = [], []
    for start, _, line in code.co_lines():
        starts.append(start)
        lines.append(line)
    return starts, lines


def _line_at(code, lasti: int) -> int | None:
    starts, lines = _line_table(code)
    return lines[bisect.bisect_right(starts, lasti) - 1]


def tracing() -> bool:
    """Whether a kernel is being traced (in this thread)."""
    return getattr(_state, "tracer", None) is not None


def current() -> Tracer:
    tracer = getattr(_state, "tracer", None)
    if tracer is None:
        raise InvalidValueError("nki calls build a Program and need a kernel being traced: "
                           "call resize_kernels.nki.trace(kernel, *args)")
    return tracer


def trace(kernel, *args, sbuf_partition_bytes: int = DEFAULT_SBUF_PARTITION_BYTES,
          max_instructions: int | None = None, grid: tuple = (), sources: bool = True, platform: str = "trn1",
          **kwargs) -> Program:
    """Trace ``kernel(*args, **kwargs)`` into a Program.

    Tensor arguments are numpy arrays or TensorSpecs (anything with ``shape`` and
    ``dtype``); they become the Program's HBM inputs, named after the kernel's
    parameters. The kernel returns the HBM tensor(s) that become its outputs.
    More than ``max_instructions`` instructions (None: MAX_INSTRUCTIONS) raise InstructionBudgetError (a ResourceError).
    ``platform`` ("trn1" or "trn2") is what ``nisa.get_nc_version()`` tells the kernel.
    ``sources=False`` skips recording each instruction's source line (a bulk
    trace that nobody reads, such as a verifier's). With a ``grid`` (SPMD, ``kernel[grid]``) the kernel is traced once per
    instance, in row-major order of ``nl.program_id``, into one Program: as NKI
    documents, the instances of a launch run one after another on one core, and
    they share the HBM tensors they create with ``buffer=nl.shared_hbm``.
    """
    fn = getattr(kernel, "func", kernel)
    if getattr(_state, "tracer", None) is not None:
        raise InvalidValueError(f"cannot trace {fn.__name__} inside another trace; call it from the kernel "
                                f"being traced instead (it is then inlined)")
    params = _parameter_names(fn)
    tracer = Tracer(fn.__name__, sbuf_partition_bytes, MAX_INSTRUCTIONS if max_instructions is None else max_instructions,
                    sources)
    handles = []
    for n, a in enumerate(args):
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            name = params[n] if n < len(params) else f"arg{n}"
            handles.append(tracer.hbm(name, a.shape, a.dtype, "input"))
        else:
            handles.append(a)
    tracer.grid, tracer.platform = grid, platform
    _state.tracer = tracer
    collecting = gc.isenabled()
    gc.disable()  # each full collection walks the whole Program built so far: a long trace's time went there
    try:
        result = None
        for pid in itertools.product(*map(range, grid)):  # one empty tuple when there is no grid
            tracer.program_id, tracer.shared_index = pid, 0
            mark = tracer.mark()
            got = fn(*handles, **kwargs)
            tracer.release(mark)  # an instance's tiles end with it
            if result is None:
                result = got
            elif _storages(got) != _storages(result):
                raise InvalidValueError(f"SPMD instance {pid} of {fn.__name__} returned other tensors than instance "
                                        f"{(0,) * len(grid)}; every instance must return the shared_hbm outputs")
        tracer.finish()
    finally:
        _state.tracer = None
        if collecting:
            gc.enable()
    program = tracer.program
    for out in (result if isinstance(result, (tuple, list)) else (result,)):
        if not isinstance(out, NkiTensor) or out.storage not in program.internal:
            raise InvalidTypeError(f"kernel {fn.__name__} must return the HBM tensor(s) it created with "
                                   f"nl.ndarray(..., buffer=nl.shared_hbm), got {out!r}")
        program.internal.remove(out.storage)
        out.storage.kind = "output"
        out.storage.shape = out.shape  # a kernel may return a reshaped view (same elements): its shape is the output's
        program.outputs.append(out.storage)
    program.sbuf_high_water = tracer.allocator.high_water
    program.psum_high_water = tracer.psum_allocator.high_water
    program.sbuf_extents = extents(tracer.allocator.reach, tracer.psum_allocator.reach)
    return program


def _storages(result) -> list:
    return [getattr(t, "storage", t) for t in (result if isinstance(result, (tuple, list)) else (result,))]


def _parameter_names(fn) -> tuple:
    """The names of ``fn``'s parameters; remembered per plain function, as ``inspect.signature`` is slow."""
    if isinstance(fn, types.FunctionType):
        return _function_parameter_names(fn)
    return tuple(inspect.signature(fn).parameters)


@functools.lru_cache(maxsize=256)
def _function_parameter_names(fn) -> tuple:
    return tuple(inspect.signature(fn).parameters)
