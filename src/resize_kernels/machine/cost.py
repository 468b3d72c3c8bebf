"""A cost model over a traced Program: NKI's scheduling on a NeuronCore, engine by engine, DMA engine by DMA engine.

Nothing here is measured: every figure is a public number from the NKI
documentation (architecture guides, nki.isa pages, DMA overview and bandwidth
guide) or FITTED by ``benchmarks/fit_cost.py`` to public measurements, and says
which (``benchmarks/calibration.py`` reports the model against them). Anything
printed from it says it is modelled. The model is generic: it reads instruction
records, access patterns and tiles, never kernel names.

Engines (compute)
E1  Clocks: vector 1.12 GHz, scalar and GpSimd 1.4 GHz, tensor 2.8 GHz on trn1
    (NeuronCore-v2); 0.96, 1.2 and 2.4 GHz on trn2 (v3). [NKI architecture guides:
    "Trainium/Inferentia2 Architecture" and "Trainium2 Architecture", engine tables]
E2  A vector instruction (tensor_scalar, tensor_copy, tensor_tensor, memset,
    tensor_reduce, select) costs ``fixed + max(64, k * N)`` cycles for N free
    elements per partition of its destination (of its input for tensor_reduce) and
    k tensor inputs (2 for tensor_tensor): "N cycles, 2N with two tensor inputs,
    a minimum initiation interval of ~64 cycles, add ~100 cycles when
    instructions are dependent or N is small" [nki.isa docstrings, v2 guide].
    fixed = 80, inside the documented 60-100. The documented fast cases:
    tensor_tensor at N with an operand in PSUM, or for bf16 add/multiply/subtract
    on contiguous SBUF data; memset of bf16 zeros at N/2. (trn2's 2-4x bf16
    mode is not modelled: the docs give no rule for when it applies.)
E3  iota costs ``150 + N`` GpSimd cycles [nki.isa.iota], and so does affine_select:
    "GPSIMD_START + N GpSimd Engine cycles ... GPSIMD_START ... roughly 150 engine
    cycles" [nki.isa.affine_select].
E3b A tensor_copy on GpSimd costs ``150 + max(64, N)`` GpSimd cycles: "max(MIN_II,
    N) engine cycles" [nki.isa.tensor_copy] after GpSimd's ~150-cycle start-up per
    instruction [v2 architecture guide].
E3c nc_n_gather is ceil(N / 512) GpSimd instructions [nki.isa.nc_n_gather]: ASSUMED
    150 start-up cycles each (E3b) and one element per cycle, ``150 * ceil(N / 512)
    + N``; the docs give no cycle count.
E4  On NeuronCore-v2 the vector engine and GpSimd cannot access SBUF at the
    same time [v2 architecture guide]: on trn1 their instructions take turns (one
    shared port); on trn2 they run side by side.
E5  A scalar-engine activation costs like a one-input vector instruction at the
    scalar clock (the docs give the same per-element streaming; no other figure),
    whatever its function and whether scale and bias are numbers or tiles ("all
    activation instructions have the same execution cost" [v2 guide]); tensor_scalar
    on the scalar engine alike. Reading the reduce registers out to ``reduce_res``
    adds 64 cycles (ActReadAccumulator, "roughly 64 ScalarE cycles" [v2 guide];
    activation_reduce: "max(MIN_II, N) + MIN_II" [nki.isa.activation_reduce, Neuron
    2.26]). Switching between functions of different activation tables is not
    charged: ASSUMED 0, as the docs give neither the cost of a table load nor which
    functions share a table.
E6  Each compute engine runs one instruction at a time.
E7  Tensor engine (nc_matmul, nc_transpose on the tensor engine) in tensor-engine
    cycles: nc_matmul ``max(min(64, N_stationary), N_moving)`` for bfloat16 and
    float16 inputs, 4x that for float32, for N free elements per partition of each
    input [nki.isa.nc_matmul, Neuron 2.26, "Estimated instruction cost": the average
    of back-to-back matmuls; the v2 guide's "max(N, MM_INIT_LATENCY = 64)" and "FP32
    roughly 4x"]; with an ``is_*_onezero`` hint on float32 inputs 2x (ASSUMED from
    "could lead to 2x better performance"); nc_transpose ``max(P, min(64, F))``
    [nki.isa.nc_transpose, Neuron 2.26]. No fixed term: the documented figures are
    initiation intervals of a pipelined engine (ASSUMED: its latency is hidden).
    PE tiling (tile_position) runs tiles one after another (ASSUMED: not modelled).
    float8 inputs cost as bfloat16 (the same page's table). nc_matmul with
    ``perf_mode="double_row"`` takes two contraction elements per PE per cycle, so
    M and N are its stationary's and moving's free sizes halved and it costs as a
    bfloat16 matmul of that M and N ["the above double FP8 LoadStationary/
    MultiplyMoving instruction sequence with a 256 contraction dimension takes the
    same amount of time as the regular BF16/FP16 LoadStationary/MultiplyMoving
    instruction sequence with a 128 contraction dimension": Trainium2 architecture
    guide, "Double FP8 Matmul Performance"]; trn1 has no such mode ("On
    NeuronCore-v2, performance mode is not supported", nki.isa.nc_matmul), so
    costing one there is an error.
E8  Vector engine extras, ``fixed + max(64, cycles)`` as E2, with cycles from their
    nki.isa pages (Neuron 2.26, "Estimated instruction cost"): tensor_tensor_scan 2N;
    bn_stats N; bn_aggr 13 * N / 3; reciprocal 8N [also "NKI API Common Fields",
    engine selection]; scalar_tensor_tensor 2N, N for bfloat16 data and operand1
    with subtract then multiply and N even; nc_transpose on the vector engine N;
    tensor_scalar with (P, 1) tile operands N (operands broadcast at no cost);
    tensor_scalar_reduce N plus one more MIN_II (64 cycles) for the reduction.
E9  tensor_partition_reduce and memset on GpSimd: ``150 + max(64, N)`` GpSimd
    cycles, as E3b (ASSUMED: no page gives their cost; each GpSimd core reads 16
    partitions x 32 bits per cycle [v2 guide], so N cycles stream a tile).

DMA
D1  16 DMA engines per NeuronCore; a transfer is cut into one packet per engine
    per 8 SBUF partitions: partitions p go to engine p // 8, so a 128-partition
    transfer uses all 16 and a 4-partition one uses one. An HBM-to-HBM copy
    spreads its rows the same way. Each engine works through its packets in
    turn: it has 16 queues served round-robin, so a packet whose transfer
    waits for its data does not hold up a later, independent one (the model
    puts each packet in the engine's first idle gap after the transfer is
    ready). [DMA overview; "how to reduce inefficient DMA transfers"]
D2  A packet's data moves in ``max(descriptors * descriptor_ns, bytes / engine bandwidth)``: the engine
    bandwidth is 23 B/ns on trn2 [DMA bandwidth guide, per engine; the DMA overview's 27.2 GB/s is the
    theoretical one] and FITTED on trn1 (the guide's 17 B/ns is below two trn1 measurements: a 32 KiB transfer
    in 1810 ns and a kernel at 294 GB/s); a descriptor (one contiguous run, D3) takes at least descriptor_ns,
    FITTED to the perf guide's 4-byte transfers at 7 ns each.
D2b An engine starts at most one packet per ``packet_ns``: a packet occupies its engine for
    ``max(packet_ns, D2)``, its setup pipelined with the previous packet's data ("the DMA packet rate, not HBM
    bandwidth, becomes the limiting factor" [DMA bandwidth guide]); FITTED to the guide's throughput curve
    (trn2, 128 partitions: time per transfer constant below ~1 KiB per partition), ASSUMED the same on trn1.
D3  A descriptor is one contiguous run of elements, contiguous on both sides
    within a partition-row (an HBM-to-HBM copy may run across rows).
D4  A transfer completes ``dma_latency_us`` after its last packet's data: ~1.0 us "from trigger to transfer
    start" on trn2 [DMA overview, profile]; trn1's is undocumented and FITTED (cost_fit.json).
D5  Indirect DMAs (gather, scatter) generate their descriptors in software on
    GpSimd [DMA overview, DGE page]: ``dge_fixed + dge_per_descriptor *
    descriptors`` GpSimd cycles, after the index tile is written; the transfer
    starts when they are. ASSUMED: iota's fixed 150 cycles and 8 cycles per
    descriptor (one 64-byte descriptor written per 8 cycles); no measurement here
    isolates it.
D6  dma_copy_add (read-modify-write into HBM) costs like dma_copy (no figure).
D7  Bandwidth is per DMA engine; 16 engines x 17 B/ns = 272 GB/s per NeuronCore
    stays below trn1's 820 GB/s HBM per device, so there is no separate HBM cap.

Scheduling (NKI's semantics)
S1  An instruction starts when every earlier instruction it conflicts with has
    finished (read-after-write, write-after-read, write-after-write) and its
    engine has an idle gap long enough: the compiler's scheduler fills an
    engine's idle time with any instruction that is ready, in program order of
    priority (list scheduling), which is how the iterations of an affine_range
    loop pipeline across engines.
S2  SBUF conflicts are per tile and partition range: a read waits for earlier
    writes to the partitions it touches of its tile (one ``nl.ndarray``),
    whatever part of its free dimensions they wrote, and a write for earlier
    reads of them too, but only for earlier writes to its own bytes; accesses to
    different tiles at overlapping addresses (a buffer reused across loop
    iterations) conflict alike. The measured adaptive-pool cases only fit this
    (their batch blocks, free-dimension slices of one tile, do not overlap on
    hardware: benchmarks/calibration.py). HBM conflicts are by tensor and element
    range.
S3  ``nl.affine_range`` iterations overlap because the tracer gives a tile
    declared in the loop body rotating buffers (nki/language.py), so iteration
    i + 1 does not wait for i's tiles; ``sequential_range``, ``static_range``
    and plain Python loops reuse one buffer and so keep order. SPMD instances
    are traced one after another and keep order through their shared tensors.
S4  A launch costs ``launch_us`` of device time before its first instruction, FITTED to the device-side floor
    (a (4, 3) float16 add kernel, 3.2 us mean [nrtpy device benchmark, Neuron 2.32]). ``nki.benchmark``'s
    latencies include host-device overhead besides [nki.benchmark: the latency of a neuron-bench run]:
    ``host_us``, FITTED to nki-samples' adaptive-pool perf tests, is added to what nki.benchmark reports only.
M1  SBUF capacity 192 KiB per partition on trn1, 224 KiB on trn2.

FITTED values are read from machine/cost_fit.json, which ``benchmarks/fit_cost.py`` writes from the public
figures it names there (every input is in issue 38's visible corpus); the fit is on the physics (per-descriptor,
per-packet, per-launch costs), never per kernel.
"""

from __future__ import annotations

import bisect
import collections
import json
import math
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..display import html_table
from ..errors import InvalidValueError, plural
from ..intmath import ceil_div
from . import dtypes
from .access import AccessPattern
from .isa import (DMA_QUEUES, Activation, AffineSelect, BnAggr, BnStats, DmaCopy, DmaCopyAdd, Instruction, Iota, Memset, NcMatmul,
                  NcNGather, NcTranspose, Program, Reciprocal, ScalarTensorTensor, TensorCopy, TensorPartitionReduce,
                  TensorReduce, TensorScalar, TensorTensor, TensorTensorScan, free_size)
from .memory import NUM_PARTITIONS, SBUF_PARTITION_BYTES

#: Engines in the order reports list them; a Program with tensor-engine instructions also lists "tensor" (after
#: scalar), one without keeps these keys only.
ENGINES = ("vector", "gpsimd", "scalar", "dma")
TENSOR_ENGINES = ("vector", "gpsimd", "scalar", "tensor", "dma")
#: DMA engines per NeuronCore (D1) and the SBUF partitions each serves.
DMA_ENGINES = DMA_QUEUES
PARTITIONS_PER_DMA_ENGINE = NUM_PARTITIONS // DMA_ENGINES


class TargetFeatureError(InvalidValueError):
    """A Program using an instruction mode the target's NeuronCore lacks (a double_row matmul costed on trn1)."""


@dataclass(frozen=True)
class CostParams:
    """The figures of one target (the module docstring gives each one's source)."""

    target: str
    core: str
    clock_ghz: float  # E1: vector engine
    gpsimd_ghz: float  # E1: GpSimd and scalar engine
    sbuf_partition_bytes: int  # M1
    dma_engine_gbps: float  # D2: bytes per ns per DMA engine (trn1: FITTED)
    dma_latency_us: float  # D4: DMA overview (trn2); trn1 FITTED
    descriptor_ns: float  # D2, FITTED
    packet_ns: float  # D2b, FITTED
    launch_us: float  # S4, FITTED
    host_us: float  # S4: nki.benchmark's host-device overhead, FITTED
    vector_fixed_cycles: int = 80  # E2
    vector_floor_cycles: int = 64  # E2
    iota_fixed_cycles: int = 150  # E3
    gpsimd_fixed_cycles: int = 150  # E3b
    shared_sbuf_port: bool = True  # E4: vector and GpSimd take turns on SBUF (NeuronCore-v2)
    dma_engines: int = DMA_ENGINES  # D1
    dge_fixed_cycles: int = 150  # D5, ASSUMED (iota's fixed cost)
    dge_cycles_per_descriptor: float = 8.0  # D5, ASSUMED
    tensor_ghz: float = 2.8  # E1: tensor engine (v2 architecture guide; trn2: 2.4, Trainium2 guide)
    pe_min_ii_cycles: int = 64  # E7: min(64, N_stationary) and MM_INIT_LATENCY (nki.isa.nc_matmul; v2 guide)
    pe_fp32_passes: int = 4  # E7: float32 inputs cost 4x (nki.isa.nc_matmul; v2 guide)
    pe_onezero_fp32_passes: int = 2  # E7: ASSUMED from "could lead to 2x better performance" (nki.isa.nc_matmul)
    # E7: contraction elements per PE per cycle in double_row mode; 0 where the core has no such mode (trn1:
    # nki.isa.nc_matmul, "Performance mode"; trn2: 2, Trainium2 architecture guide, "Double FP8 Matmul Performance")
    pe_double_row_pairs: int = 0
    act_read_accumulator_cycles: int = 64  # E5: ActReadAccumulator (v2 guide, "Pipelined Reduction")
    scan_passes: int = 2  # E8: tensor_tensor_scan max(MIN_II, 2N) (nki.isa.tensor_tensor_scan)
    bn_aggr_cycles_per_triple: int = 13  # E8: bn_aggr max(MIN_II, 13 * (N / 3)) (nki.isa.bn_aggr)
    reciprocal_passes: int = 8  # E8: reciprocal max(MIN_II, 8N) (nki.isa.reciprocal)

    def us(self, cycles: float, engine: str = "vector") -> float:
        """Cycles of ``engine`` in microseconds."""
        ghz = self.clock_ghz if engine == "vector" else self.tensor_ghz if engine == "tensor" else self.gpsimd_ghz
        return cycles / (ghz * 1e3)

    @property
    def peak_dma_gbps(self) -> float:
        """Bytes per ns (GB/s) all DMA engines move together: the roofline's bandwidth."""
        return self.dma_engines * self.dma_engine_gbps

    def describe(self) -> str:
        return (f"{self.target} cost model (every time it gives is modelled): {self.core}, vector engine "
                f"{self.clock_ghz} GHz, GpSimd/scalar {self.gpsimd_ghz} GHz, {self.dma_engines} DMA engines x "
                f"{self.dma_engine_gbps:g} GB/s, "
                f"{self.descriptor_ns:g} ns per descriptor and {self.packet_ns:g} ns per packet at least, "
                f"{self.dma_latency_us:g} us DMA latency, {self.launch_us:g} us launch (+{self.host_us:g} us host "
                f"overhead in nki.benchmark)")


#: The FITTED figures (D2, D2b, S4), written by benchmarks/fit_cost.py with the inputs it fitted them to.
FIT_FILE = Path(__file__).with_name("cost_fit.json")


def _fitted(target: str) -> dict:
    return {name: entry["value"] for name, entry in json.loads(FIT_FILE.read_text())["parameters"][target].items()}


TARGETS = {
    "trn1": CostParams("trn1", "NeuronCore-v2", 1.12, 1.4, SBUF_PARTITION_BYTES["trn1"], **_fitted("trn1")),
    "trn2": CostParams("trn2", "NeuronCore-v3", 0.96, 1.2, SBUF_PARTITION_BYTES["trn2"], 23.0, 1.0,
                       shared_sbuf_port=False, tensor_ghz=2.4, pe_double_row_pairs=2, **_fitted("trn2")),
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
    """Modelled cycles of a compute instruction on its engine (E2, E3, E5, E7-E9)."""
    extra = _EXTRA_COSTS.get(type(inst))
    if extra is not None and (cycles := extra(inst, params)) is not None:
        return cycles
    n = free_elements(inst.data if isinstance(inst, TensorReduce) else inst.dst)  # a reduce streams its input
    if isinstance(inst, (Iota, AffineSelect)):
        return params.iota_fixed_cycles + n
    if inst.engine == "gpsimd" and isinstance(inst, TensorCopy):  # E3b
        return params.gpsimd_fixed_cycles + max(params.vector_floor_cycles, n)
    if isinstance(inst, NcNGather):  # E3c
        return params.gpsimd_fixed_cycles * ceil_div(n, 512) + n
    if inst.engine not in ("vector", "scalar"):
        raise InvalidValueError(f"the cost model knows no costs for {inst.opcode} on engine {inst.engine!r}; "
                                f"add them to machine/cost.py")
    return params.vector_fixed_cycles + max(params.vector_floor_cycles, math.ceil(_streams(inst) * n))


_BF16_FAST_OPS = ("add", "multiply", "subtract")


def _vector(cycles: float, params: CostParams) -> int:
    """E2's form: the fixed cost plus the streaming cycles, at least the minimum initiation interval."""
    return params.vector_fixed_cycles + max(params.vector_floor_cycles, math.ceil(cycles))


def _matmul_cycles(inst: NcMatmul, params: CostParams) -> int:
    """E7: nc_matmul in tensor-engine cycles."""
    pairs = 1
    if inst.perf_mode == "double_row":
        pairs = params.pe_double_row_pairs
        if not pairs:
            raise TargetFeatureError(f"nc_matmul perf_mode='double_row' requires NeuronCore-v3 or newer (trn2), got "
                                     f"{params.target} ({params.core}, which has no performance mode); cost it on "
                                     f"trn2, or trace a perf_mode='none' matmul for {params.target}")
    columns, moving = free_size(inst.stationary) // pairs, free_size(inst.moving) // pairs
    cycles = max(min(params.pe_min_ii_cycles, columns), moving)
    if inst.stationary.dtype == dtypes.float32:
        onezero = inst.is_stationary_onezero or inst.is_moving_onezero
        cycles *= params.pe_onezero_fp32_passes if onezero else params.pe_fp32_passes
    return cycles


def _transpose_cycles(inst: NcTranspose, params: CostParams) -> int:
    """E7 on the tensor engine (P partitions, F free elements), E8 on the vector engine."""
    if inst.engine == "tensor":
        return max(inst.data.shape[0], min(params.pe_min_ii_cycles, free_size(inst.data)))
    return _vector(free_size(inst.data), params)


def _activation_cycles(inst: Activation, params: CostParams) -> int:
    """E5: one pass over dst's elements, whatever scale and bias are, plus the register read-out."""
    read_out = params.act_read_accumulator_cycles if inst.reduce_res is not None else 0
    return _vector(free_elements(inst.dst), params) + read_out


def _scalar_tensor_tensor_cycles(inst: ScalarTensorTensor, params: CostParams) -> int:
    """E8: 2N, or N for bf16 data and operand1 with subtract then multiply and N even."""
    n = free_size(inst.data)
    fast = (inst.data.dtype == inst.operand1.dtype == dtypes.bfloat16 and inst.op0 == "subtract"
            and inst.op1 == "multiply" and n % 2 == 0)
    return _vector(n if fast else 2 * n, params)


def _gpsimd_stream_cycles(inst: Instruction, params: CostParams) -> int:
    """E9: GpSimd's start-up and one cycle per element per partition of the largest operand."""
    n = max(free_elements(ap) for ap in (inst.dst, *inst.sources()))
    return params.gpsimd_fixed_cycles + max(params.vector_floor_cycles, n)


def _tensor_scalar_cycles(inst: TensorScalar, params: CostParams) -> int | None:
    """E8: tensor_scalar_reduce ``max(MIN_II, N) + MIN_II``; other tensor_scalars by E2 (None)."""
    if inst.reduce_res is None:
        return None
    return _vector(free_size(inst.data), params) + params.vector_floor_cycles


def _memset_cycles(inst: Memset, params: CostParams) -> int | None:
    return _gpsimd_stream_cycles(inst, params) if inst.engine == "gpsimd" else None


#: Costs of the instructions E7-E9 add (and of activation and tensor_scalar forms E2 and E5 did not have), by
#: record type; a function returning None leaves the instruction to the E2-E5 rules below.
_EXTRA_COSTS = {
    NcMatmul: _matmul_cycles,
    NcTranspose: _transpose_cycles,
    TensorTensorScan: lambda inst, params: _vector(params.scan_passes * free_size(inst.data0), params),
    BnStats: lambda inst, params: _vector(free_size(inst.data), params),
    BnAggr: lambda inst, params: _vector(params.bn_aggr_cycles_per_triple * free_size(inst.data) / 3, params),
    Reciprocal: lambda inst, params: _vector(params.reciprocal_passes * free_size(inst.data), params),
    ScalarTensorTensor: _scalar_tensor_tensor_cycles,
    TensorPartitionReduce: _gpsimd_stream_cycles,
    Activation: _activation_cycles,
    Memset: _memset_cycles,
    TensorScalar: _tensor_scalar_cycles,
}


def _streams(inst: Instruction) -> float:
    """Passes over N elements (E2): one per tensor input; tensor_tensor runs at N, not 2N, with an operand in PSUM
    or for bf16 add/multiply/subtract on contiguous SBUF data; a bf16 memset of zeros at N/2."""
    if isinstance(inst, TensorTensor):
        operands = (inst.dst, *inst.sources())
        if any(ap.tensor.memory == "psum" for ap in operands):
            return 1
        if (inst.op in _BF16_FAST_OPS and all(ap.dtype == dtypes.bfloat16 and _contiguous_run(ap) == free_elements(ap)
                                              for ap in operands)):
            return 1
    if isinstance(inst, Memset) and inst.dst.dtype == dtypes.bfloat16 and inst.value == 0:
        return 0.5
    if isinstance(inst, TensorScalar):  # (P, 1) tile operands are broadcast, not streamed (E8)
        return 1
    return max(1, len(inst.sources()))


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
    """How one DMA moves its bytes: partitions, per-partition payload, descriptors (D1, D3)."""

    partitions: int
    elements_per_partition: int
    bytes_per_partition: int
    descriptor_bytes: int
    descriptors: int
    nbytes: int
    first_partition: int = 0  # of the SBUF side (D1: which DMA engines serve it); -1 for HBM to HBM
    partition_step: int = 1  # between the SBUF side's partitions (its first pair's step, in partitions)


def _partitions(dma: DmaCopy) -> tuple[int, int]:
    """(first partition, step between partitions) of the DMA's SBUF side; (-1, 1) without one."""
    for ap in (dma.dst, dma.src):
        if ap.is_sbuf:
            free = ap.tensor.free_size
            step, num = ap.pattern[0]
            return ap.offset // free, (step // free if num > 1 else 1) or 1
    return -1, 1  # no SBUF side


def dma_shape(dma: DmaCopy) -> DmaShape:
    """Partitions, per-partition payload and descriptors of a DMA."""
    size, itemsize = dma.dst.size, dma.dst.dtype.itemsize
    rows = dma.dst.shape[0]
    run = min(_contiguous_run(dma.src), _contiguous_run(dma.dst))
    per_row = size // rows
    return DmaShape(rows, per_row, per_row * itemsize, run * itemsize, size // run, size * itemsize,
                    *_partitions(dma))


def _moving_ns(descriptors: float, nbytes: float, params: CostParams) -> float:
    """How long an engine moves ``nbytes`` in ``descriptors`` descriptors (D2)."""
    return max(descriptors * params.descriptor_ns, nbytes / params.dma_engine_gbps)


def dma_packets(shape: DmaShape, params: CostParams) -> list[tuple[int, float]]:
    """(DMA engine, microseconds its data moves) for each packet of a transfer (D1, D2); D2b's per-packet
    occupancy is the scheduler's (``packet_occupancy_us``)."""
    if shape.first_partition < 0:  # HBM to HBM: rows spread over the engines (D1)
        n = min(params.dma_engines, ceil_div(shape.partitions, PARTITIONS_PER_DMA_ENGINE))
        busy_ns = _moving_ns(shape.descriptors / n, shape.nbytes / n, params)
        return [(e, busy_ns / 1e3) for e in range(n)]
    if shape.partition_step > 1:  # every step-th partition: each engine serves those of its 8 (D1)
        engines = collections.Counter(((shape.first_partition + i * shape.partition_step) // PARTITIONS_PER_DMA_ENGINE)
                                      % params.dma_engines for i in range(shape.partitions))
        return [(e, _moving_ns(n / shape.partitions * shape.descriptors, n / shape.partitions * shape.nbytes, params)
                 / 1e3) for e, n in engines.items()]
    packets = []
    p, end = shape.first_partition, shape.first_partition + shape.partitions
    while p < end:
        engine = (p // PARTITIONS_PER_DMA_ENGINE) % params.dma_engines
        stop = min(end, (p // PARTITIONS_PER_DMA_ENGINE + 1) * PARTITIONS_PER_DMA_ENGINE)
        share = (stop - p) / shape.partitions
        packets.append((engine, _moving_ns(share * shape.descriptors, share * shape.nbytes, params) / 1e3))
        p = stop
    return packets


def packet_occupancy_us(packet_us: float, params: CostParams) -> float:
    """How long a packet whose data moves in ``packet_us`` holds its engine (D2b)."""
    return max(packet_us, params.packet_ns / 1e3)


def dma_us(shape: DmaShape, params: CostParams) -> float:
    """Trigger-to-completion time of one transfer on idle engines (D2, D4), without descriptor generation (D5)."""
    return max(busy for _, busy in dma_packets(shape, params)) + params.dma_latency_us


def descriptor_gen_cycles(shape: DmaShape, params: CostParams) -> float:
    """GpSimd cycles to generate an indirect DMA's descriptors in software (D5)."""
    return params.dge_fixed_cycles + params.dge_cycles_per_descriptor * shape.descriptors


# -- memory conflicts (S2) ---------------------------------------------------------------------------

SBUF = "sbuf"
_SBUF_CHUNK = 4096  # bytes of a partition per index bucket (tiles are the unit of most conflicts)


_MAX_RUNS = 1024  # an HBM access split into more contiguous runs than this is taken as its bounding range


def _footprint(ap: AccessPattern):
    """(memory, rects) an access conflicts with; a rect is (lo, hi, p0, p1).

    SBUF (S2): a pair of rects on the partitions the access touches: the whole
    tile's bytes (what reads, and writes after reads, conflict on) and the bytes
    the access spans (what a write after a write conflicts on). HBM: elements
    lo..hi of the tensor, one rect per contiguous run (so interleaved stores do
    not conflict), or the whole tensor for an indirect access.
    """
    t = ap.tensor
    if ap.is_sbuf:
        free, size = t.free_size, t.dtype.itemsize
        p0, f0 = divmod(ap.offset, free)
        s0, n0 = ap.pattern[0]
        p1 = p0 + (s0 // free) * (n0 - 1) + 1 if n0 > 1 else p0 + 1
        low = high = 0  # ap.free_extent(), written out: this runs for every access
        for s, n in ap.pattern[1:]:
            if s < 0:
                low += s * (n - 1)
            else:
                high += s * (n - 1)
        return SBUF, (((t.address, t.address + t.bytes_per_partition, p0, p1),
                       (t.address + (f0 + low) * size, t.address + (f0 + high + 1) * size, p0, p1)),)
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
    firsts = starts[np.concatenate(([0], breaks))].tolist()
    lasts = starts[np.concatenate((breaks - 1, [len(starts) - 1]))].tolist()
    return t, tuple((lo, hi + run, 0, 1) for lo, hi in zip(firsts, lasts))


class _Memory:
    """Finish times of the latest writes, and of the reads since, over one memory; bucketed for speed."""

    def __init__(self, chunk: int):
        self.chunk = chunk
        self.writes: dict[int, dict] = collections.defaultdict(dict)  # bucket -> {rect: finish}
        self.reads: dict[int, dict] = collections.defaultdict(dict)

    def _buckets(self, rect):
        return range(rect[0] // self.chunk, (rect[1] - 1) // self.chunk + 1)

    def ready(self, rect, writing: bool) -> float:
        """When an access may start: after the writes its tile rect overlaps (a read) or its own bytes overlap (a
        write), and after the reads its tile rect overlaps if it writes (S2). ``rect`` is (tile rect, own bytes)."""
        tile, own = rect
        t = 0.0
        for b in self._buckets(tile):  # r overlaps (lo, hi, p0, p1), tested inline: this runs per access
            for table, (lo, hi, p0, p1) in ((self.writes.get(b), own if writing else tile),
                                            (self.reads.get(b) if writing else None, tile)):
                if table:
                    for r, finish in table.items():
                        if finish > t and r[0] < hi and lo < r[1] and r[2] < p1 and p0 < r[3]:
                            t = finish
        return t

    def read(self, rect, finish: float) -> None:
        rect = rect[0]  # reads are recorded on the tile's rect
        for b in self._buckets(rect):
            table = self.reads[b]
            if table.get(rect, -1.0) < finish:
                table[rect] = finish

    def write(self, rect, finish: float) -> None:
        """Record a write on its own bytes; earlier accesses it covers are ordered before it, so forget them."""
        rect = rect[1]
        lo, hi, p0, p1 = rect
        for b in self._buckets(rect):
            for table in (self.writes.get(b), self.reads.get(b)):
                if table:  # the rects r that rect covers
                    for r in [r for r in table if lo <= r[0] and r[1] <= hi and p0 <= r[2] and r[3] <= p1]:
                        del table[r]
            self.writes[b][rect] = finish


class _Intervals:
    """Finish times over one HBM tensor's elements: fixed segments, each with its latest write and the reads since.

    The same answers as _Memory for one-dimensional rects. The segments are cut
    once, at every boundary of every access the Program makes to the tensor
    (``points``, known before scheduling), so an access updates only the
    segments it covers: its time does not grow with the accesses recorded
    before it (segments split as accesses came cost a list insertion each, and
    grew quadratic in the rows a Program writes). An access's rects (its
    contiguous runs: disjoint, sorted) are taken at once, in numpy.
    """

    def __init__(self, starts: np.ndarray):
        self.starts = starts  # segment i: starts[i] .. starts[i + 1]; the last is past every address, never touched
        self.writes, self.reads = np.zeros(len(starts)), np.zeros(len(starts))

    @staticmethod
    def cut(points) -> np.ndarray:
        """The segment starts for accesses bounded by ``points`` (every lo and hi of their rects)."""
        return np.unique(np.append(np.asarray(points, np.int64), _PAST_ADDRESSES))

    @staticmethod
    def span(starts: np.ndarray, rects):
        """Where rects lie in the segments ``starts`` (every lo and hi is a segment start): (first, stop) of one
        rect, or (the indices for reduceat, every segment index) of several."""
        lo, hi = _bounds(rects)
        i, j = np.searchsorted(starts, lo), np.searchsorted(starts, hi)
        if len(rects) == 1:
            return int(i[0]), int(j[0])
        # reduceat over a[:j[-1]] at i0, j0, i1, ..., i_last: the max of each [i, j) at its even places (the
        # last runs to the slice's end); the odd ones, the gaps, are dropped
        return np.stack([i, j], axis=1).ravel()[:-1], _ranges(i, j)

    def ready(self, span, writing: bool) -> float:
        """When an access may start: after the writes its segments hold (and their reads, to write)."""
        first, stop = span
        if isinstance(first, int):
            t = float(self.writes[first:stop].max())
            return max(t, float(self.reads[first:stop].max())) if writing else t
        end = stop[-1] + 1  # the last segment of the last rect
        t = float(np.maximum.reduceat(self.writes[:end], first)[::2].max())
        if writing:
            t = max(t, float(np.maximum.reduceat(self.reads[:end], first)[::2].max()))
        return t

    def read(self, span, finish: float) -> None:
        first, stop = span
        inside = slice(first, stop) if isinstance(first, int) else stop
        self.reads[inside] = np.maximum(self.reads[inside], finish)

    def write(self, span, finish: float) -> None:
        """The access's segments are written at ``finish``, with no reads since."""
        first, stop = span
        inside = slice(first, stop) if isinstance(first, int) else stop
        self.writes[inside], self.reads[inside] = finish, 0.0


def _ranges(first: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """The indices first[k] .. stop[k] - 1 of every k, in one array."""
    counts = np.maximum(stop - first, 0)
    offsets = np.repeat(first - np.cumsum(counts) + counts, counts)
    return offsets + np.arange(counts.sum())


#: An address past every element of an HBM tensor (fewer than 2**31 elements: contract.ADDRESS_LIMIT).
_PAST_ADDRESSES = 1 << 62


def _bounds(rects) -> tuple[np.ndarray, np.ndarray]:
    """The (lo, hi) arrays of one-dimensional rects (lo, hi, 0, 1)."""
    lohi = np.array([r[:2] for r in rects], np.int64).reshape(-1, 2)
    return lohi[:, 0], lohi[:, 1]


class _Lane:
    """One engine's busy intervals, merged and sorted: an instruction takes the first idle gap after it is ready."""

    def __init__(self):
        self.starts: list[float] = []
        self.ends: list[float] = []

    def first_fit(self, ready: float, duration: float) -> float:
        """The earliest start at or after ``ready`` of an idle gap ``duration`` long."""
        starts, ends = self.starts, self.ends
        i = bisect.bisect_right(ends, ready)  # the first interval ending after ready
        t = ready
        while i < len(starts) and starts[i] < t + duration:
            t = max(t, ends[i])
            i += 1
        return t

    def book(self, t: float, duration: float) -> None:
        """Mark t .. t + duration busy (it must be idle), merging with the intervals it touches."""
        starts, ends = self.starts, self.ends
        lo = bisect.bisect_left(ends, t)
        hi = bisect.bisect_right(starts, t + duration)
        new_start = min([t] + starts[lo:hi])
        new_end = max([t + duration] + ends[lo:hi])
        starts[lo:hi], ends[lo:hi] = [new_start], [new_end]

    def place(self, ready: float, duration: float) -> float:
        """Book ``duration`` in the first gap at or after ``ready``; returns its start."""
        t = self.first_fit(ready, duration)
        self.book(t, duration)
        return t


def _place(lanes: list[_Lane], ready: float, duration: float) -> float:
    """Book ``duration`` at the earliest time at or after ``ready`` when every lane is idle; returns the start."""
    t = ready
    while True:
        fits = [lane.first_fit(t, duration) for lane in lanes]
        if max(fits) == t:
            for lane in lanes:
                lane.book(t, duration)
            return t
        t = max(fits)


#: The scalar engine's reduce registers, one per partition (lane), kept between activations: an activation that
#: uses them is ordered after the last one that did, as a write to these "addresses" (E5).
ACT_REGISTERS = "act_registers"


def _registers(data: AccessPattern):
    """The footprint of the reduce registers of the lanes (partitions) an activation of ``data`` runs on."""
    first = data.offset // data.tensor.free_size
    return ACT_REGISTERS, ((first, first + data.shape[0], 0, 1),)


class _Layout:
    """Target-independent, once per Program: the segments of every HBM tensor it writes (tensors only read never
    conflict) and of the reduce registers, cut at every access's bounds, and each access's span in them."""

    def __init__(self, program: Program, accesses):
        written = {inst.dst.tensor for inst in program.instructions if not inst.dst.is_sbuf}
        points = {key: [] for key in (*written, ACT_REGISTERS)}
        for dsts, srcs, index_fp in accesses:
            for key, rects in (*dsts, *srcs, *((index_fp,) if index_fp else ())):
                if key in points:
                    points[key].extend(x for r in rects for x in r[:2])
        self.starts = {key: _Intervals.cut(p) for key, p in points.items()}
        self.spans: dict[int, object] = {}  # id(rects) -> their span (the rects live as long as the accesses)

    @classmethod
    def of(cls, program: Program) -> tuple[list, _Layout]:
        """Every instruction's accesses (``_accesses``) and the layout they cut."""
        accesses = [_accesses(inst) for inst in program.instructions]
        return accesses, cls(program, accesses)

    def span(self, key, rects):
        found = self.spans.get(id(rects))
        if found is None:
            found = self.spans[id(rects)] = _Intervals.span(self.starts[key], rects)
        return found


class _Memories:
    """The SBUF, every HBM tensor the Program writes and the reduce registers, on the Program's ``_Layout``."""

    def __init__(self, layout: _Layout):
        self.layout = layout
        self.mem = {SBUF: _Memory(_SBUF_CHUNK), **{key: _Intervals(s) for key, s in layout.starts.items()}}

    def ready(self, footprint, writing: bool) -> float:
        key, rects = footprint
        mem = self.mem.get(key)
        if mem is None:
            return 0.0
        if isinstance(mem, _Intervals):
            return mem.ready(self.layout.span(key, rects), writing)
        return mem.ready(rects[0], writing) if len(rects) == 1 else max(mem.ready(r, writing) for r in rects)

    def read(self, footprint, finish: float) -> None:
        key, rects = footprint
        mem = self.mem.get(key)
        if isinstance(mem, _Intervals):
            mem.read(self.layout.span(key, rects), finish)
        elif mem is not None:
            for r in rects:
                mem.read(r, finish)

    def write(self, footprint, finish: float) -> None:
        key, rects = footprint
        mem = self.mem[key]
        if isinstance(mem, _Intervals):
            mem.write(self.layout.span(key, rects), finish)
        else:
            for r in rects:
                mem.write(r, finish)



# -- the report --------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Event:
    """One instruction in the modelled schedule: when it started and ended, where it ran (all modelled, us)."""

    index: int  # position in the Program
    opcode: str
    engine: str  # vector, scalar, gpsimd or dma
    start_us: float
    end_us: float  # a DMA: when its completion is signalled (D4)
    nbytes: int = 0  # a DMA's payload
    packets: tuple = ()  # a DMA: (engine, start, end) per packet (D1)
    dge: tuple | None = None  # an indirect DMA: (start, end) of its descriptor generation on GpSimd (D5)


@dataclass
class CostReport:
    """What the model says about one Program on one target. Times are modelled, in microseconds."""

    program: str
    params: CostParams
    modelled_us: float  # launch (S4) plus the schedule's makespan
    instructions: dict  # engine -> instruction count (dma: transfers)
    cycles: dict  # engine -> modelled cycles of its own instructions (vector, gpsimd, scalar)
    busy_us: dict  # engine -> modelled busy time; gpsimd includes descriptor generation, dma sums its engines
    dma_count: int
    dma_bytes: int
    dma_indirect: int
    dma_strided: int
    dma_descriptors: int
    dma_shapes: collections.Counter  # (partitions, elements/partition, bytes/partition, bytes/descriptor) -> DMAs
    descriptor_gen_cycles: float  # GpSimd cycles spent generating indirect descriptors (D5)
    sbuf_high_water: int
    sbuf_capacity: int
    label: str = ""  # what was costed, e.g. the kernel and shapes
    events: list = field(default_factory=list, repr=False)  # one Event per instruction, in program order
    roofline_us: float | None = None  # a lower bound the caller sets: the bytes the op must move at peak bandwidth
    notes: tuple = ()  # lines the caller adds under the headline (how the Program was chosen, say)

    @property
    def target(self) -> str:
        return self.params.target

    @property
    def instruction_us(self) -> list:
        """(start, end) of every instruction, in program order (modelled)."""
        return [(e.start_us, e.end_us) for e in self.events]

    @property
    def benchmark_us(self) -> float:
        """What nki.benchmark reports: the modelled device time plus its host-device overhead (S4)."""
        return self.modelled_us + self.params.host_us

    @property
    def efficiency(self) -> float | None:
        """roofline_us / modelled_us: 1.0 is a kernel at the DMA limit (None without a roofline)."""
        return None if self.roofline_us is None else self.roofline_us / self.modelled_us

    @property
    def compute_engines(self) -> tuple:
        """The compute engines it reports: vector, gpsimd, scalar, and tensor where the Program uses it."""
        return tuple(engine for engine in self.instructions if engine != "dma")

    def timeline(self) -> list:
        """The schedule as lanes: (lane, name, start_us, end_us, args) rows, lanes "vector", "scalar", "gpsimd"
        ("tensor" too where the Program uses it) and "dma0".."dma15" (one per DMA engine, a row per packet). See
        machine/timeline.py to draw or save it."""
        rows = []
        for e in self.events:
            base = self.params.launch_us
            args = {"index": e.index, "opcode": e.opcode}
            if e.engine != "dma":
                rows.append((e.engine, e.opcode, base + e.start_us, base + e.end_us, args))
                continue
            args = {**args, "bytes": e.nbytes, "engines": len(e.packets), "completes_us": round(base + e.end_us, 4)}
            if e.dge is not None:
                rows.append(("gpsimd", f"{e.opcode} descriptors", base + e.dge[0], base + e.dge[1], args))
            for engine, start, end in e.packets:
                rows.append((f"dma{engine}", e.opcode, base + start, base + end, args))
        return rows

    def schedule(self, limit: int | None = 40) -> str:
        """The first ``limit`` instructions' modelled start, end, engine and DMA engines, one line each."""
        shown = self.events if limit is None else self.events[:limit]
        base = self.params.launch_us
        lines = [f"modelled schedule ({self.target}; us from the start of the launch, which takes {base:g} us):"]
        for e in shown:
            where = e.engine
            if e.packets:
                qs = sorted({q for q, _, _ in e.packets})
                where = f"dma {qs[0]}" if len(qs) == 1 else f"dma {qs[0]}-{qs[-1]}" if qs == list(
                    range(qs[0], qs[-1] + 1)) else "dma " + ",".join(map(str, qs))
            dge = f"  (descriptors on gpsimd {base + e.dge[0]:,.2f}-{base + e.dge[1]:,.2f})" if e.dge else ""
            lines.append(f"  {e.index:>5}  {e.opcode:<14} {where:<9} {base + e.start_us:>10,.2f} -> "
                         f"{base + e.end_us:>10,.2f}{dge}")
        if len(shown) < len(self.events):
            lines.append(f"  ... {len(self.events) - len(shown):,} more instructions")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<CostReport {self.label or self.program} on {self.target}: modelled {self.modelled_us:,.1f} us, "
                f"{sum(self.instructions.values()):,} instructions, {self.dma_count:,} DMAs>")

    def _repr_html_(self) -> str:
        """The headline figures as a table (a notebook's rich display); ``str`` has the engines and DMA shapes."""
        rows = [("modelled", f"{self.modelled_us:,.1f} us on {self.target}")]
        if self.roofline_us is not None:
            rows.append(("roofline", f"{self.roofline_us:,.1f} us: efficiency {self.efficiency:.0%} (modelled)"))
        if self.notes:
            rows.append(("notes", "; ".join(note.strip() for note in self.notes)))
        rows += [(engine, f"{plural(self.instructions[engine], 'instruction')}, busy {self.busy_us[engine]:,.1f} us "
                          f"(modelled)") for engine in self.compute_engines]
        rows.append(("dma", f"{plural(self.dma_count, 'transfer')} ({self.dma_indirect:,} indirect), "
                            f"{plural(self.dma_bytes, 'byte')}, "
                            f"busy {self.busy_us['dma']:,.1f} us summed over {self.params.dma_engines} engines (modelled)"))
        return html_table(rows, caption=f"cost of {self.label or 'program ' + self.program}")

    def _repr_png_(self) -> bytes | None:
        """The modelled timeline, small (a notebook's picture); None without matplotlib or events."""
        from ..display import png_bytes
        from .timeline import draw_timeline, figure_size

        if not self.events:
            return None
        return png_bytes(lambda fig: draw_timeline(fig, self), figure_size(self))

    def __str__(self) -> str:
        p, tag = self.params, f"({self.target} cost model)"
        head = self.label or f"program {self.program}"
        lines = [f"cost of {head}: modelled {self.modelled_us:,.1f} us {tag}",
                 f"  {p.describe()}; engines and DMA engines overlap as dependencies allow"]
        lines += [f"  {note}" for note in self.notes]
        if self.roofline_us is not None:
            lines.append(f"  roofline {self.roofline_us:,.1f} us (the bytes a resize must move at {p.peak_dma_gbps:g} "
                         f"GB/s): efficiency {self.efficiency:.0%} (modelled)")
        for engine in self.compute_engines:
            extra = (f" + {self.descriptor_gen_cycles:,.0f} cycles generating the descriptors of "
                     f"{plural(self.dma_indirect, 'indirect DMA')}" if engine == "gpsimd" and self.dma_indirect else "")
            if engine == "tensor":
                extra = f" at {p.tensor_ghz} GHz"
            count = self.instructions[engine]
            lines.append(f"  {engine:<7} {count:>7,} {'instruction ' if count == 1 else 'instructions'} "
                         f"{self.cycles[engine]:>12,} cycles{extra}; busy modelled {self.busy_us[engine]:,.1f} us")
        lines.append(f"  dma     {self.dma_count:>7,} {'transfer ' if self.dma_count == 1 else 'transfers'} "
                     f"({self.dma_indirect:,} indirect, {self.dma_strided:,} strided), "
                     f"{plural(self.dma_bytes, 'byte')}, {plural(self.dma_descriptors, 'descriptor')}; "
                     f"DMA engines busy, summed over {p.dma_engines} engines: modelled {self.busy_us['dma']:,.1f} us")
        for (rows, elems, nbytes, dbytes), n in self.dma_shapes.most_common(4):
            lines.append(f"          {n:>7,} x {plural(rows, 'partition')} x {plural(elems, 'element')} ({nbytes:,} B "
                         f"per partition, {dbytes:,} B per descriptor)")
        if len(self.dma_shapes) > 4:
            lines.append(f"          ... and {plural(len(self.dma_shapes) - 4, 'more DMA shape')}")
        lines.append(f"  SBUF    {self.sbuf_high_water:,} of {self.sbuf_capacity:,} bytes per partition at most")
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython
        printer.text(repr(self) if cycle else str(self))


def _index_tile(inst: Instruction) -> AccessPattern | None:
    """The index tile (vector_offset) of an indirect DMA, else None."""
    if inst.engine != "dma":
        return None
    return (inst.dst if isinstance(inst, DmaCopyAdd) else inst.src).vector_offset


def _accesses(inst: Instruction) -> tuple[list, list, tuple | None]:
    """The footprints an instruction writes and reads (S2), and its index tile's (an indirect DMA's, read by
    descriptor generation, D5) or None."""
    dsts = [_footprint(ap) for ap in inst.destinations()]
    offset_ap = _index_tile(inst)
    srcs = [_footprint(ap) for ap in inst.sources() if ap is not offset_ap]
    if inst.reads_dst:
        srcs += dsts  # read-modify-write
    if getattr(inst, "uses_registers", False):  # the scalar engine's reduce registers, as a memory (E5)
        dsts.append(_registers(inst.data))
    return dsts, srcs, None if offset_ap is None else _footprint(offset_ap)


#: (what, id(Program)) -> (a weak reference to it, its instruction count, the facts): a Program costed on several
#: targets (selection bounds and costs each on trn1 and trn2) finds its footprints and DMA shapes once. A few
#: Programs are kept, the latest.
_FACTS: dict[tuple, tuple] = {}


def _program_fact(program: Program, what: str, make):
    """``make()``, a target-independent fact about ``program``, computed once per Program."""
    key = (what, id(program))
    entry = _FACTS.get(key)
    if entry is not None and entry[0]() is program and entry[1] == len(program.instructions):
        return entry[2]
    fact = make()
    while len(_FACTS) >= 12:
        del _FACTS[next(iter(_FACTS))]
    _FACTS[key] = (weakref.ref(program), len(program.instructions), fact)
    return fact


def _program_facts(program: Program, what: str, make) -> list:
    """``make(inst)`` for every instruction of ``program``, computed once per Program."""
    return _program_fact(program, what, lambda: [make(inst) for inst in program.instructions])


def _dma_shape(inst: Instruction) -> DmaShape | None:
    return dma_shape(inst) if inst.engine == "dma" else None


def busy_bound_us(program: Program, target: str = "trn1") -> float:
    """A lower bound on ``program_cost``'s modelled time, found without scheduling: the launch and the busiest
    lane's booked time (an engine runs its instructions one at a time, the shared SBUF port its vector and GpSimd
    ones (E4), a DMA queue its packets (D2b) and then the last transfer's latency (D4)), with no waits between
    them. For a search that only needs to know a Program cannot beat a time."""
    params = target_params(target)
    busy, slack = collections.Counter(), collections.Counter()
    for inst, shape in zip(program.instructions, _program_facts(program, "shapes", _dma_shape)):
        if inst.engine == "dma":
            if _index_tile(inst) is not None:  # D5
                busy["gpsimd"] += params.us(descriptor_gen_cycles(shape, params), "gpsimd")
            for q, packet_us in dma_packets(shape, params):
                held = packet_occupancy_us(packet_us, params)
                busy[q] += held
                slack[q] = max(slack[q], held - packet_us)  # the last packet ends packet_us after it starts
        else:
            duration = params.us(engine_cycles(inst, params), inst.engine)
            busy[inst.engine] += duration
            if params.shared_sbuf_port and inst.engine in ("vector", "gpsimd"):
                busy["port"] += duration
    queues = [busy[q] - slack[q] + params.dma_latency_us for q in slack]
    return params.launch_us + max([0.0, *queues, *(t for lane, t in busy.items() if isinstance(lane, str))])


def program_cost(program: Program, target: str = "trn1", label: str = "",
                 stop_past_us: float | None = None, events: bool = True,
                 params: CostParams | None = None) -> CostReport | None:
    """Cost ``program`` on ``target``: counts, cycles, DMA traffic and the modelled schedule (S1-S4).

    ``stop_past_us``: give up (return None) as soon as the modelled time passes it (the schedule's end so far
    can only grow), for a caller that only needs to know the Program is slower than that. ``events=False``
    keeps no Event per instruction (the report's ``events``, ``timeline()`` and ``schedule()`` are then empty;
    every figure is the same), for a caller that reads the totals only, such as a cost-only benchmark of a
    large Program. ``params``: these figures instead of ``target``'s (benchmarks/fit_cost.py's candidates).
    """
    params = params or target_params(target)
    accesses, layout = _program_fact(program, "accesses", lambda: _Layout.of(program))  # kept together: the
    shapes_of = _program_facts(program, "shapes", _dma_shape)  # layout's spans are keyed by the accesses' ids
    memories = _Memories(layout)
    engine_lanes = {"vector": _Lane(), "gpsimd": _Lane(), "scalar": _Lane(), "tensor": _Lane()}
    port = _Lane()  # E4: the SBUF port the vector engine and GpSimd share on NeuronCore-v2
    lanes = [_Lane() for _ in range(params.dma_engines)]
    engines = TENSOR_ENGINES if any(inst.engine == "tensor" for inst in program.instructions) else ENGINES
    counts = dict.fromkeys(engines, 0)
    cycles = dict.fromkeys(engines[:-1], 0)
    busy = dict.fromkeys(engines, 0.0)
    shapes = collections.Counter()
    dma_bytes = descriptors = indirect = 0
    gen_cycles = 0.0
    kept = []
    end, stop = 0.0, math.inf if stop_past_us is None else stop_past_us - params.launch_us
    for index, inst in enumerate(program.instructions):
        engine = inst.engine
        counts[engine] += 1
        dsts, srcs, index_fp = accesses[index]
        ready = max([memories.ready(d, True) for d in dsts] + [memories.ready(s, False) for s in srcs])
        if engine == "dma":
            shape = shapes_of[index]
            shapes[(shape.partitions, shape.elements_per_partition, shape.bytes_per_partition,
                    shape.descriptor_bytes)] += 1
            dma_bytes += shape.nbytes
            descriptors += shape.descriptors
            dge = None
            if index_fp is not None:  # D5: GpSimd writes the descriptors once the index tile is ready
                indirect += 1
                gen = descriptor_gen_cycles(shape, params)
                gen_cycles += gen
                gen_us = params.us(gen, "gpsimd")
                gen_start = engine_lanes["gpsimd"].place(memories.ready(index_fp, False), gen_us)
                gen_done = gen_start + gen_us
                busy["gpsimd"] += gen_done - gen_start
                memories.read(index_fp, gen_done)
                ready = max(ready, gen_done)
                dge = (gen_start, gen_done)
            packets = []
            for q, packet_us in dma_packets(shape, params):  # D1, D2
                held = packet_occupancy_us(packet_us, params)  # D2b
                begin = lanes[q].place(ready, held)
                busy["dma"] += held
                packets.append((q, begin, begin + packet_us))
            start = min(b for _, b, _ in packets)
            finish = max(e for _, _, e in packets) + params.dma_latency_us  # D4
            if events:
                kept.append(Event(index, inst.opcode, engine, start, finish, shape.nbytes, tuple(packets), dge))
        else:
            c = engine_cycles(inst, params)
            cycles[engine] += c
            duration = params.us(c, engine)
            if params.shared_sbuf_port and engine in ("vector", "gpsimd"):  # E4
                start = _place([engine_lanes[engine], port], ready, duration)
            else:
                start = engine_lanes[engine].place(ready, duration)  # _place of one lane
            finish = start + duration
            busy[engine] += duration
            if events:
                kept.append(Event(index, inst.opcode, engine, start, finish))
        for s in srcs:
            memories.read(s, finish)
        for d in dsts:
            memories.write(d, finish)
        end = max(end, finish)
        if end > stop:
            return None
    return CostReport(
        program=program.name, params=params, modelled_us=params.launch_us + end,
        instructions=counts, cycles=cycles, busy_us=busy, dma_count=counts["dma"], dma_bytes=dma_bytes,
        dma_indirect=indirect, dma_strided=counts["dma"] - indirect, dma_descriptors=descriptors,
        dma_shapes=shapes, descriptor_gen_cycles=gen_cycles, sbuf_high_water=program.sbuf_high_water,
        sbuf_capacity=params.sbuf_partition_bytes, label=label, events=kept)
