"""A cost model over a traced Program: engine cycles, DMA traffic and a modelled time.

Nothing here is measured: every figure comes from the public numbers collected
in design/HARDWARE.md ("Cost figures usable in a model", "DMA", "Memories"),
and anything printed from it says it is modelled. The model is generic: it
reads instruction records, access patterns and tiles, never kernel names.

Assumptions, each with its source (HARDWARE.md unless marked ASSUMED):

E1  Vector engine clock 1.12 GHz on trn1 (NeuronCore-v2), 0.96 GHz on trn2 (v3).
E2  A vector instruction (tensor_scalar, tensor_copy, tensor_tensor, memset,
    tensor_reduce, select) costs ``80 + max(64, k * N)`` cycles for N free
    elements per partition of its destination (of its input for tensor_reduce,
    which the NKI docs cost as max(MIN_II, N) of the input) and k tensor inputs
    (2 for tensor_tensor, the tile operands of select, else 1): "about N
    cycles, 2N with two tensor inputs, a floor of about 64 cycles, about 60-100
    cycles fixed overhead"; we take 80, the middle of 60-100.
E3  iota costs ``150 + N`` GpSimd cycles, the documented figure as it stands.
E4  ASSUMED: GpSimd runs at the vector engine's clock (the docs give no GpSimd clock).
E5  ASSUMED: a scalar-engine activation costs like a one-input vector instruction,
    ``80 + max(64, N)`` cycles at the vector clock. The docs give no scalar-engine
    figure; it streams one element per partition per cycle like the vector
    engine, so we give it the vector engine's costs rather than invent others.
D1  Each dma_copy is one transfer on one of 16 DMA queues ("16 DMA engines per
    NeuronCore"). A queue carries one transfer at a time; a transfer goes to the
    queue that frees first.
D2  A transfer occupies its queue for ``1.3 us + (bytes + 256 * descriptors) / 27 GB/s``
    ("fixed ~1.3 us per transfer, ~27 GB/s per engine, on v2 and v3": trn1 and
    trn2 share the DMA figures). The fixed part is charged as queue time, not
    hidden latency, so a queue pays it once per transfer.
D3  Descriptor efficiency: a transfer is cut into one descriptor per contiguous
    run, the elements contiguous on both sides within a partition-row (an
    HBM-to-HBM copy may run across rows). Each descriptor costs 256 bytes' worth
    of queue time on top of its payload, so a run of b bytes moves at
    ``b / (b + 256)`` of the engine's bandwidth: 20% at 64 B, 50% at 256 B,
    89% at 2 KiB. This fits "payloads under 256 B per partition are
    overhead-bound; 2 KiB or more is efficient".
D4  ASSUMED (the docs do not quantify indirect vs strided DMA; they say indirect
    gathers "need software descriptor generation (GpSimd)"): an indirect DMA
    first has GpSimd generate its descriptors, ``150 + 1 * descriptors`` cycles
    (iota's cost form, one element per descriptor). That work occupies GpSimd,
    waits for the index tile, and the transfer starts after it. Strided
    (direct) DMAs use hardware descriptors at no engine cost.
D5  ASSUMED: dma_copy_add (read-modify-write into HBM) costs like dma_copy; the
    docs give no figure for the add.
D6  16 queues x 27 GB/s = 432 GB/s per NeuronCore, below trn1's 820 GB/s HBM per
    device: the model puts no separate HBM bandwidth cap.
S1  Each engine (vector, gpsimd, scalar) runs its instructions one at a time in
    program order; DMAs follow D1. No issue or semaphore latency between engines.
S2  An instruction starts when its engine (queue) is free and every earlier
    instruction it conflicts with has finished: read-after-write,
    write-after-read and write-after-write. SBUF accesses conflict by partition
    range x byte-address range, so a tile reused at one address across loop
    iterations orders the iterations; HBM accesses by tensor and the element
    range an access pattern spans (the whole tensor for an indirect access).
    Taking these in program order is list scheduling over the dependency graph
    with each engine's stream kept in order, as the hardware queues keep it.
M1  SBUF capacity 192 KiB per partition on trn1, 224 KiB on trn2.
"""

from __future__ import annotations

import bisect
import collections
import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidValueError
from .access import AccessPattern
from .isa import DMA_QUEUES, DmaCopy, DmaCopyAdd, Instruction, Iota, Program, TensorReduce
from .memory import SBUF_PARTITION_BYTES

#: Engines in the order reports list them.
ENGINES = ("vector", "gpsimd", "scalar", "dma")


@dataclass(frozen=True)
class CostParams:
    """The figures of one target (see the module docstring for their sources)."""

    target: str
    core: str
    clock_ghz: float  # E1, E4: vector and GpSimd (and, E5, scalar) clock
    sbuf_partition_bytes: int  # M1
    vector_fixed_cycles: int = 80  # E2
    vector_floor_cycles: int = 64  # E2
    iota_fixed_cycles: int = 150  # E3
    dma_fixed_us: float = 1.3  # D2
    dma_queue_gbps: float = 27.0  # D2
    dma_queues: int = DMA_QUEUES  # D1
    descriptor_overhead_bytes: int = 256  # D3
    descriptor_gen_fixed_cycles: int = 150  # D4 (assumed)
    descriptor_gen_cycles_each: int = 1  # D4 (assumed)

    def us(self, cycles: float) -> float:
        """Engine cycles in microseconds."""
        return cycles / (self.clock_ghz * 1e3)

    def describe(self) -> str:
        return (f"{self.target} cost model: {self.core}, engines at {self.clock_ghz} GHz, "
                f"{self.dma_queues} DMA queues x {self.dma_queue_gbps:g} GB/s, {self.dma_fixed_us} us modelled per transfer")


TARGETS = {
    "trn1": CostParams("trn1", "NeuronCore-v2", 1.12, SBUF_PARTITION_BYTES["trn1"]),
    "trn2": CostParams("trn2", "NeuronCore-v3", 0.96, SBUF_PARTITION_BYTES["trn2"]),
}


def target_params(target: str) -> CostParams:
    """The CostParams of ``target`` ("trn1" or "trn2")."""
    if target not in TARGETS:
        raise InvalidValueError(f"the cost model has no target {target!r}; choose one of {', '.join(map(repr, TARGETS))}")
    return TARGETS[target]


# -- what one instruction costs ----------------------------------------------------------------------

def free_elements(ap: AccessPattern) -> int:
    """Elements per partition an engine instruction streams (all but the first, partition, dimension)."""
    n = 1
    for _, num in ap.pattern[1:]:
        n *= num
    return n


def engine_cycles(inst: Instruction, params: CostParams) -> int:
    """Modelled cycles of a vector, GpSimd or scalar instruction (E2, E3, E5)."""
    n = free_elements(inst.data if isinstance(inst, TensorReduce) else inst.dst)  # a reduce streams its input
    if isinstance(inst, Iota):
        return params.iota_fixed_cycles + n
    inputs = max(1, len(inst.sources()))  # E2: k tensor inputs (2 for tensor_tensor, up to 3 for select)
    if inst.engine not in ("vector", "scalar"):
        raise InvalidValueError(f"the cost model knows no costs for {inst.opcode} on engine {inst.engine!r}; "
                                f"add them to machine/cost.py")
    return params.vector_fixed_cycles + max(params.vector_floor_cycles, inputs * n)


def _contiguous_run(ap: AccessPattern) -> int:
    """Elements contiguous in storage at the end of the pattern, within a partition-row unless HBM-direct."""
    pairs = ap.pattern if not ap.is_sbuf and ap.indirect_dim is None else ap.pattern[1:]
    run = 1
    for step, num in reversed(pairs):
        if num == 1:
            continue
        if step != run:
            break
        run *= num
    return run


@dataclass(frozen=True)
class DmaShape:
    """How one DMA moves its bytes: per partition and per descriptor (D3)."""

    partitions: int
    elements_per_partition: int
    bytes_per_partition: int
    descriptor_bytes: int
    descriptors: int
    nbytes: int


def dma_shape(dma: DmaCopy) -> DmaShape:
    """Partitions, per-partition payload and descriptors of a DMA."""
    size, itemsize = dma.dst.size, dma.dst.dtype.itemsize
    rows = dma.dst.shape[0]
    run = min(_contiguous_run(dma.src), _contiguous_run(dma.dst))
    per_row = size // rows
    return DmaShape(rows, per_row, per_row * itemsize, run * itemsize, size // run, size * itemsize)


def dma_us(shape: DmaShape, params: CostParams) -> float:
    """Queue time of one transfer (D2, D3), excluding any descriptor generation (D4)."""
    wire = shape.nbytes + params.descriptor_overhead_bytes * shape.descriptors
    return params.dma_fixed_us + wire / (params.dma_queue_gbps * 1e3)


def descriptor_gen_cycles(shape: DmaShape, params: CostParams) -> int:
    """GpSimd cycles to generate an indirect DMA's descriptors in software (D4, assumed)."""
    return params.descriptor_gen_fixed_cycles + params.descriptor_gen_cycles_each * shape.descriptors


# -- memory conflicts (S2) ---------------------------------------------------------------------------

SBUF = "sbuf"
_SBUF_CHUNK = 256  # bytes of a partition per index bucket


_MAX_RUNS = 1024  # an HBM access split into more contiguous runs than this is taken as its bounding range


def _footprint(ap: AccessPattern):
    """(memory, rects) an access can touch; a rect is (lo, hi, p0, p1).

    SBUF: bytes lo..hi of partitions p0..p1. HBM: elements lo..hi of the tensor,
    one rect per contiguous run (so interleaved stores do not conflict), or the
    whole tensor for an indirect access.
    """
    t = ap.tensor
    if ap.is_sbuf:
        free, size = t.free_size, t.dtype.itemsize
        p0, f0 = divmod(ap.offset, free)
        (s0, n0) = ap.pattern[0]
        p1 = p0 + (s0 // free) * (n0 - 1) + 1 if n0 > 1 else p0 + 1
        low, high = ap.free_extent()
        return SBUF, ((t.address + (f0 + low) * size, t.address + (f0 + high + 1) * size, p0, p1),)
    if ap.indirect_dim is not None:
        return t, ((0, t.size, 0, 1),)
    pairs = [(step, num) for step, num in ap.pattern if num > 1]
    run = 1
    while pairs and pairs[-1][0] == run:
        run *= pairs.pop()[1]
    if not pairs:
        return t, ((ap.offset, ap.offset + run, 0, 1),)
    if math.prod(num for _, num in pairs) > _MAX_RUNS:
        lo, hi = ap.static_bounds()
        return t, ((lo, hi + 1, 0, 1),)
    starts = np.array([ap.offset])
    for step, num in pairs:
        starts = (starts[:, None] + step * np.arange(num)).ravel()
    starts = np.unique(starts)
    breaks = np.flatnonzero(np.diff(starts) != run) + 1  # merge runs that touch
    return t, tuple((int(g[0]), int(g[-1]) + run, 0, 1) for g in np.split(starts, breaks))


def _overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def _covers(a, b) -> bool:
    return a[0] <= b[0] and b[1] <= a[1] and a[2] <= b[2] and b[3] <= a[3]


class _Memory:
    """Finish times of the latest writes, and of the reads since, over one memory; bucketed for speed."""

    def __init__(self, chunk: int):
        self.chunk = chunk
        self.writes: dict[int, dict] = collections.defaultdict(dict)  # bucket -> {rect: finish}
        self.reads: dict[int, dict] = collections.defaultdict(dict)

    def _buckets(self, rect):
        return range(rect[0] // self.chunk, (rect[1] - 1) // self.chunk + 1)

    def ready(self, rect, writing: bool) -> float:
        """When an access to ``rect`` may start: after overlapping writes, and reads too if it writes."""
        t = 0.0
        for b in self._buckets(rect):
            for table in (self.writes.get(b), self.reads.get(b) if writing else None):
                if table:
                    for r, finish in table.items():
                        if finish > t and _overlap(r, rect):
                            t = finish
        return t

    def read(self, rect, finish: float) -> None:
        for b in self._buckets(rect):
            table = self.reads[b]
            if table.get(rect, -1.0) < finish:
                table[rect] = finish

    def write(self, rect, finish: float) -> None:
        """Record a write; earlier accesses it covers are ordered before it, so forget them."""
        for b in self._buckets(rect):
            for table in (self.writes.get(b), self.reads.get(b)):
                if table:
                    for r in [r for r in table if _covers(rect, r)]:
                        del table[r]
            self.writes[b][rect] = finish


class _Intervals:
    """Finish times over one HBM tensor's elements: sorted segments, each with its latest write and the reads since.

    The same answers as _Memory for one-dimensional rects, in time that does not
    grow with the accesses already recorded: a write finishes after everything
    it overlaps (it waited for them), so it may simply overwrite their segments.
    """

    def __init__(self):
        self.starts, self.writes, self.reads = [0], [0.0], [0.0]  # segment i: starts[i] .. starts[i + 1]

    def _span(self, lo: int, hi: int) -> tuple[int, int]:
        """Indices of the segments lo..hi covers, split so that they start at lo and end at hi."""
        return self._split(lo), self._split(hi)

    def _split(self, x: int) -> int:
        i = bisect.bisect_right(self.starts, x) - 1
        if self.starts[i] != x:
            i += 1
            self.starts.insert(i, x)
            self.writes.insert(i, self.writes[i - 1])
            self.reads.insert(i, self.reads[i - 1])
        return i

    def ready(self, rect, writing: bool) -> float:
        i = bisect.bisect_right(self.starts, rect[0]) - 1
        j = bisect.bisect_left(self.starts, rect[1])
        t = max(self.writes[i:j])
        return max(t, max(self.reads[i:j])) if writing else t

    def read(self, rect, finish: float) -> None:
        a, b = self._span(rect[0], rect[1])
        reads = self.reads[a:b]
        self.reads[a:b] = [finish] * (b - a) if finish >= max(reads) else [max(r, finish) for r in reads]

    def write(self, rect, finish: float) -> None:
        a, b = self._span(rect[0], rect[1])
        self.starts[a:b], self.writes[a:b], self.reads[a:b] = [rect[0]], [finish], [0.0]


class _Memories:
    """The SBUF and every HBM tensor the Program writes (tensors only read never conflict)."""

    def __init__(self, program: Program):
        self.mem = {SBUF: _Memory(_SBUF_CHUNK)}
        for inst in program.instructions:
            t = inst.dst.tensor
            if not inst.dst.is_sbuf and t not in self.mem:
                self.mem[t] = _Intervals()

    def ready(self, footprint, writing: bool) -> float:
        key, rects = footprint
        mem = self.mem.get(key)
        return max(mem.ready(r, writing) for r in rects) if mem is not None else 0.0

    def read(self, footprint, finish: float) -> None:
        key, rects = footprint
        if key in self.mem:
            for r in rects:
                self.mem[key].read(r, finish)

    def write(self, footprint, finish: float) -> None:
        key, rects = footprint
        for r in rects:
            self.mem[key].write(r, finish)


# -- the report --------------------------------------------------------------------------------------

@dataclass
class CostReport:
    """What the model says about one Program on one target. Times are modelled, in microseconds."""

    program: str
    params: CostParams
    modelled_us: float
    instructions: dict  # engine -> instruction count (dma: transfers)
    cycles: dict  # engine -> modelled cycles of its own instructions (vector, gpsimd, scalar)
    busy_us: dict  # engine -> modelled busy time; gpsimd includes descriptor generation, dma sums its queues
    dma_count: int
    dma_bytes: int
    dma_indirect: int
    dma_strided: int
    dma_descriptors: int
    dma_efficiency: float  # payload / (payload + descriptor overhead), over all DMAs (D3)
    dma_shapes: collections.Counter  # (partitions, elements/partition, bytes/partition, bytes/descriptor) -> DMAs
    descriptor_gen_cycles: int  # GpSimd cycles spent generating indirect descriptors (D4, assumed)
    sbuf_high_water: int
    sbuf_capacity: int
    label: str = ""  # what was costed, e.g. the kernel and shapes
    instruction_us: list = field(default_factory=list, repr=False)  # per instruction: (start, finish)

    @property
    def target(self) -> str:
        return self.params.target

    def __str__(self) -> str:
        p, tag = self.params, f"({self.target} cost model)"
        head = self.label or f"program {self.program}"
        lines = [f"cost of {head}: modelled {self.modelled_us:,.1f} us {tag}",
                 f"  {p.describe()}; engines and DMA queues overlap as dependencies allow"]
        for engine in ("vector", "gpsimd", "scalar"):
            extra = (f" + {self.descriptor_gen_cycles:,} cycles generating {self.dma_indirect:,} indirect DMAs' "
                     f"descriptors (assumed)" if engine == "gpsimd" and self.dma_indirect else "")
            lines.append(f"  {engine:<7} {self.instructions[engine]:>7,} instructions {self.cycles[engine]:>12,} "
                         f"cycles{extra}; busy modelled {self.busy_us[engine]:,.1f} us")
        lines.append(f"  dma     {self.dma_count:>7,} transfers ({self.dma_indirect:,} indirect, "
                     f"{self.dma_strided:,} strided), {self.dma_bytes:,} bytes, {self.dma_descriptors:,} "
                     f"descriptors ({self.dma_efficiency:.0%} efficient); queues busy modelled "
                     f"{self.busy_us['dma']:,.1f} us over {p.dma_queues}")
        for (rows, elems, nbytes, dbytes), n in self.dma_shapes.most_common(4):
            lines.append(f"          {n:>7,} x {rows} partitions x {elems:,} elements ({nbytes:,} B per partition, "
                         f"{dbytes:,} B per descriptor)")
        if len(self.dma_shapes) > 4:
            lines.append(f"          ... {len(self.dma_shapes) - 4} more DMA shapes")
        lines.append(f"  SBUF    {self.sbuf_high_water:,} of {self.sbuf_capacity:,} bytes per partition at most")
        return "\n".join(lines)


def _index_tile(inst: Instruction) -> AccessPattern | None:
    """The index tile (vector_offset) of an indirect DMA, else None."""
    if inst.engine != "dma":
        return None
    return (inst.dst if isinstance(inst, DmaCopyAdd) else inst.src).vector_offset


def program_cost(program: Program, target: str = "trn1", label: str = "") -> CostReport:
    """Cost ``program`` on ``target``: counts, cycles, DMA traffic and the modelled makespan (S1, S2)."""
    params = target_params(target)
    memories = _Memories(program)
    engine_free = {"vector": 0.0, "gpsimd": 0.0, "scalar": 0.0}
    queues = [(0.0, q) for q in range(params.dma_queues)]  # (free at, queue), a heap
    counts = dict.fromkeys(ENGINES, 0)
    cycles = dict.fromkeys(ENGINES[:3], 0)
    busy = dict.fromkeys(ENGINES, 0.0)
    shapes = collections.Counter()
    dma_bytes = descriptors = gen_cycles = indirect = 0
    spans = []
    for inst in program.instructions:
        engine = inst.engine
        counts[engine] += 1
        dst = _footprint(inst.dst)
        offset_ap = _index_tile(inst)
        srcs = [_footprint(ap) for ap in inst.sources() if ap is not offset_ap]
        if isinstance(inst, DmaCopyAdd):
            srcs.append(dst)  # read-modify-write
        ready = max([memories.ready(dst, True)] + [memories.ready(s, False) for s in srcs])
        if engine == "dma":
            shape = dma_shape(inst)
            shapes[(shape.partitions, shape.elements_per_partition, shape.bytes_per_partition,
                    shape.descriptor_bytes)] += 1
            dma_bytes += shape.nbytes
            descriptors += shape.descriptors
            if offset_ap is not None:  # D4: GpSimd writes the descriptors once the index tile is ready
                indirect += 1
                gen = descriptor_gen_cycles(shape, params)
                gen_cycles += gen
                index = _footprint(offset_ap)
                gen_start = max(engine_free["gpsimd"], memories.ready(index, False))
                gen_done = engine_free["gpsimd"] = gen_start + params.us(gen)
                busy["gpsimd"] += params.us(gen)
                memories.read(index, gen_done)
                ready = max(ready, gen_done)
            free_at, q = heapq.heappop(queues)
            start = max(free_at, ready)
            duration = dma_us(shape, params)
            finish = start + duration
            heapq.heappush(queues, (finish, q))
        else:
            c = engine_cycles(inst, params)
            cycles[engine] += c
            start = max(engine_free[engine], ready)
            duration = params.us(c)
            finish = engine_free[engine] = start + duration
        busy[engine] += duration
        for s in srcs:
            memories.read(s, finish)
        memories.write(dst, finish)
        spans.append((start, finish))
    total_payload = dma_bytes
    overhead = params.descriptor_overhead_bytes * descriptors
    return CostReport(
        program=program.name, params=params, modelled_us=max((f for _, f in spans), default=0.0),
        instructions=counts, cycles=cycles, busy_us=busy, dma_count=counts["dma"], dma_bytes=dma_bytes,
        dma_indirect=indirect, dma_strided=counts["dma"] - indirect, dma_descriptors=descriptors,
        dma_efficiency=total_payload / (total_payload + overhead) if total_payload else 1.0,
        dma_shapes=shapes, descriptor_gen_cycles=gen_cycles, sbuf_high_water=program.sbuf_high_water,
        sbuf_capacity=params.sbuf_partition_bytes, label=label, instruction_us=spans)
