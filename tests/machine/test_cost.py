"""The cost model (machine/cost.py) on hand-built Programs and on traced kernels."""

import collections
import math

import ml_dtypes
import numpy as np
import pytest

from resize_kernels.api import trace_resize
from resize_kernels.machine import cost
from resize_kernels.machine.access import AccessPattern
from resize_kernels.machine.isa import (Activation, DmaCopy, Iota, Memset, Program, TensorCopy, TensorScalar,
                                        TensorTensor)
from resize_kernels.machine.memory import HbmTensor, SbufTile

F32, I32 = np.dtype(np.float32), np.dtype(np.int32)
TRN1 = cost.TARGETS["trn1"]


def tile(name, partitions, free, dtype=F32, address=0):
    return SbufTile(name, partitions, (free,), np.dtype(dtype), address)


def whole(t: SbufTile) -> AccessPattern:
    return AccessPattern(t, ((t.free_size, t.partitions), (1, t.free_size)))


def rows(t: HbmTensor, n, width, first_row=0) -> AccessPattern:
    """n rows of ``width`` elements of a 2-D HBM tensor, one per partition."""
    return AccessPattern(t, ((t.shape[1], n), (1, width)), first_row * t.shape[1])


def program(*instructions, inputs=(), outputs=()) -> Program:
    p = Program("hand", list(inputs), list(outputs))
    for inst in instructions:
        p.append(inst)
    return p


def dma_us(inst, params=TRN1):
    return cost.dma_us(cost.dma_shape(inst), params)


def cycles_us(inst, params=TRN1):
    return params.us(cost.engine_cycles(inst, params), inst.engine)


def total(report):
    """The schedule's makespan: modelled time less the launch (S4)."""
    return report.modelled_us - report.params.launch_us


# -- costs of single instructions -------------------------------------------------------------------

def test_vector_costs_follow_the_documented_form():
    a, b = whole(tile("a", 128, 1)), whole(tile("b", 128, 1, address=64))
    wide, wide2 = whole(tile("w", 128, 100, address=128)), whole(tile("v", 128, 100, address=512))
    assert cost.engine_cycles(TensorScalar(a, b, "add", 1.0), TRN1) == 80 + 64  # the 64-cycle floor
    assert cost.engine_cycles(TensorCopy(wide, wide2), TRN1) == 80 + 100
    assert cost.engine_cycles(TensorTensor(wide, wide, wide2, "add"), TRN1) == 80 + 200  # two tensor inputs
    assert cost.engine_cycles(Activation(wide, wide2, "floor"), TRN1) == 80 + 100  # like a one-input vector op
    assert cost.engine_cycles(Iota(wide, ((1, 100),)), TRN1) == 150 + 100
    assert cycles_us(Iota(wide, ((1, 100),))) == pytest.approx(250 / 1400)  # GpSimd at 1.4 GHz


def test_the_documented_fast_cases():
    bf = np.dtype(ml_dtypes.bfloat16)
    a, b, c = (whole(tile(n, 128, 100, bf, address=256 * k)) for k, n in enumerate("abc"))
    assert cost.engine_cycles(TensorTensor(a, b, c, "add"), TRN1) == 80 + 100  # bf16 add: N, not 2N
    assert cost.engine_cycles(TensorTensor(a, b, c, "maximum"), TRN1) == 80 + 200
    f = [whole(tile(n, 128, 100, address=1024 + 512 * k)) for k, n in enumerate("def")]
    assert cost.engine_cycles(TensorTensor(*f, "add"), TRN1) == 80 + 200
    psum = SbufTile("p", 128, (100,), F32, 0, "psum")
    assert cost.engine_cycles(TensorTensor(f[0], whole(psum), f[1], "add"), TRN1) == 80 + 100  # an operand in PSUM
    assert cost.engine_cycles(Memset(whole(tile("z", 128, 256, bf)), 0.0), TRN1) == 80 + 128  # bf16 zeros: N/2
    assert cost.engine_cycles(Memset(whole(tile("o", 128, 256, bf)), 1.0), TRN1) == 80 + 256


def test_a_transfer_is_one_packet_per_eight_partitions():
    src, dst = HbmTensor("x", (128, 512), F32, "input"), tile("t", 128, 512)
    full = cost.dma_shape(DmaCopy(whole(dst), rows(src, 128, 512)))
    packets = cost.dma_packets(full, TRN1)
    assert [e for e, _ in packets] == list(range(16))
    per_engine_ns = 8 * 2048 / TRN1.dma_engine_gbps  # 8 rows of 2 KiB, one descriptor each: bytes bound it
    assert all(busy == pytest.approx(per_engine_ns / 1e3) for _, busy in packets)
    small = cost.dma_shape(DmaCopy(AccessPattern(dst, ((512, 4), (1, 512)), 512 * 20), rows(src, 4, 512)))
    assert [e for e, _ in cost.dma_packets(small, TRN1)] == [2]  # partitions 20..23: engine 20 // 8
    assert cost.dma_us(full, TRN1) == pytest.approx(per_engine_ns / 1e3 + TRN1.dma_latency_us)


def test_a_descriptor_takes_at_least_descriptor_ns():
    src, dst = HbmTensor("x", (128, 512), F32, "input"), tile("t", 128, 512)
    small = DmaCopy(AccessPattern(dst, ((512, 128), (1, 16))), rows(src, 128, 16))  # 64 B per row
    big = DmaCopy(whole(dst), rows(src, 128, 512))  # 2 KiB per row
    assert cost.dma_shape(small).descriptor_bytes == 64 and cost.dma_shape(big).descriptor_bytes == 2048
    assert 64 / TRN1.dma_engine_gbps < TRN1.descriptor_ns  # 64 B move faster than a descriptor is processed
    packet = cost.dma_packets(cost.dma_shape(small), TRN1)[0][1]
    assert packet == pytest.approx(8 * TRN1.descriptor_ns / 1e3)  # 8 descriptors on each engine
    per_byte = [(dma_us(d) - TRN1.dma_latency_us) / d.nbytes for d in (small, big)]
    assert per_byte[0] > 1.5 * per_byte[1]


def test_an_engine_starts_one_packet_per_packet_ns():
    """Back-to-back small transfers are paced by the packet rate (D2b), large ones by their bytes."""
    src = HbmTensor("x", (128, 4096), F32, "input")

    def back_to_back(columns):
        tiles = [tile(f"t{i}", 128, columns, address=i * columns * 4) for i in range(4)]
        insts = [DmaCopy(whole(t), rows(src, 128, columns)) for t in tiles]
        report = cost.program_cost(program(*insts))
        return total(report), cost.dma_packets(cost.dma_shape(insts[0]), TRN1)[0][1]

    span, packet = back_to_back(16)  # 64 B per partition: 56 ns of data per packet
    assert packet < TRN1.packet_ns / 1e3
    assert span == pytest.approx(3 * TRN1.packet_ns / 1e3 + packet + TRN1.dma_latency_us)
    span, packet = back_to_back(1024)  # 4 KiB per partition: 1.8 us of data per packet
    assert packet > TRN1.packet_ns / 1e3
    assert span == pytest.approx(4 * packet + TRN1.dma_latency_us)


def test_strided_rows_are_one_descriptor_per_element():
    src, dst = HbmTensor("x", (128, 64), F32, "input"), tile("t", 128, 32)
    every_other = DmaCopy(whole(dst), AccessPattern(src, ((64, 128), (2, 32))))
    shape = cost.dma_shape(every_other)
    assert (shape.descriptor_bytes, shape.descriptors, shape.bytes_per_partition) == (4, 128 * 32, 128)


def test_hbm_to_hbm_copies_run_across_rows_and_engines():
    a, b = HbmTensor("a", (64, 32), F32, "input"), HbmTensor("b", (64, 32), F32, "output")
    shape = cost.dma_shape(DmaCopy(rows(b, 64, 32), rows(a, 64, 32)))
    assert shape.descriptors == 1 and shape.descriptor_bytes == 64 * 32 * 4
    assert len(cost.dma_packets(shape, TRN1)) == 8  # 64 rows: 8 engines


# -- the schedule -----------------------------------------------------------------------------------

def test_a_pure_chain_costs_the_sum_of_its_instructions_after_the_launch():
    out = HbmTensor("out", (128, 1), F32, "output")
    i, s, a = tile("i", 128, 1, I32), tile("s", 128, 1, F32, 64), tile("a", 128, 1, F32, 128)
    chain = [Iota(whole(i), ((1, 1),), channel_multiplier=1), TensorScalar(whole(s), whole(i), "multiply", 0.5),
             Activation(whole(a), whole(s), "floor"), DmaCopy(rows(out, 128, 1), whole(a))]
    report = cost.program_cost(program(*chain, outputs=[out]))
    want = sum(cycles_us(x) for x in chain[:3]) + dma_us(chain[3])
    assert total(report) == pytest.approx(want)
    assert report.modelled_us == pytest.approx(want + TRN1.launch_us)
    assert report.instructions == {"vector": 1, "gpsimd": 1, "scalar": 1, "dma": 1}


def _loads(n, shared_address: bool):
    """n loads of 128 rows x 512 floats, each followed by a store of the tile it filled."""
    x, out = HbmTensor("x", (128 * n, 512), F32, "input"), HbmTensor("out", (128 * n, 512), F32, "output")
    insts = []
    for k in range(n):
        t = tile(f"t{k}", 128, 512, address=0 if shared_address else k * 2048)
        insts += [DmaCopy(whole(t), rows(x, 128, 512, 128 * k)), DmaCopy(rows(out, 128, 512, 128 * k), whole(t))]
    return program(*insts, inputs=[x], outputs=[out]), insts


def test_independent_dmas_pipeline_on_the_engines():
    x = HbmTensor("x", (128 * 40, 512), F32, "input")
    loads = [DmaCopy(whole(tile(f"t{k}", 128, 512, address=k * 2048)), rows(x, 128, 512, 128 * k)) for k in range(40)]
    packet = cost.dma_packets(cost.dma_shape(loads[0]), TRN1)[0][1]
    report = cost.program_cost(program(*loads, inputs=[x]))
    assert total(report) == pytest.approx(40 * packet + TRN1.dma_latency_us)  # latencies overlap, packets queue
    assert report.busy_us["dma"] == pytest.approx(40 * 16 * packet)
    ends = [e.end_us for e in report.events]
    assert ends == sorted(ends) and ends[1] - ends[0] == pytest.approx(packet)


def test_a_store_waits_for_its_gather_and_the_gather_for_its_index_tile():
    x, out = HbmTensor("x", (64, 256), F32, "input"), HbmTensor("out", (128, 256), F32, "output")
    idx, t = tile("idx", 128, 1, I32), tile("t", 128, 256, address=64)
    gather_src = AccessPattern(x, ((256, 128), (1, 256)), vector_offset=whole(idx), indirect_dim=0, row_size=256)
    insts = [Iota(whole(idx), ((1, 1),), channel_multiplier=0), DmaCopy(whole(t), gather_src),
             DmaCopy(rows(out, 128, 256), whole(t))]
    report = cost.program_cost(program(*insts, inputs=[x], outputs=[out]))
    (_, iota_done), (gather_start, gather_done), (store_start, _) = report.instruction_us
    gen = TRN1.us(cost.descriptor_gen_cycles(cost.dma_shape(insts[1]), TRN1), "gpsimd")
    assert gather_start == pytest.approx(iota_done + gen)  # descriptors are generated after the iota
    assert report.events[1].dge == pytest.approx((iota_done, iota_done + gen))
    assert store_start == pytest.approx(gather_done)
    assert total(report) == pytest.approx(cycles_us(insts[0]) + gen + dma_us(insts[1]) + dma_us(insts[2]))
    assert (report.dma_indirect, report.dma_strided) == (1, 1)
    assert report.busy_us["gpsimd"] == pytest.approx(cycles_us(insts[0]) + gen)


def test_a_reused_sbuf_buffer_orders_the_next_load_after_the_last_store():
    shared, insts = _loads(4, shared_address=True)
    spans = cost.program_cost(shared).instruction_us
    for k in range(1, 4):
        assert spans[2 * k][0] == pytest.approx(spans[2 * k - 1][1])  # load k waits for store k-1 (WAR)
    separate, _ = _loads(4, shared_address=False)
    one = dma_us(insts[0])
    assert total(cost.program_cost(shared)) == pytest.approx(8 * one)
    packet = cost.dma_packets(cost.dma_shape(insts[0]), TRN1)[0][1]
    assert total(cost.program_cost(separate)) < 8 * one - 2 * TRN1.dma_latency_us  # latencies overlap
    assert total(cost.program_cost(separate)) >= 8 * packet  # the engines still carry every packet


def test_a_write_waits_for_reads_of_other_parts_of_its_tile_but_not_for_their_writes():
    x, out = HbmTensor("x", (128, 512), F32, "input"), HbmTensor("out", (128, 512), F32, "output")
    t = tile("t", 128, 1024)
    halves = [DmaCopy(AccessPattern(t, ((1024, 128), (1, 512)), 512 * k), rows(x, 128, 512)) for k in range(2)]
    spans = cost.program_cost(program(*halves, inputs=[x])).instruction_us
    assert spans[1][0] < spans[0][1]  # two writes to disjoint halves: no order, only the DMA engines they share
    store = DmaCopy(rows(out, 128, 512), AccessPattern(t, ((1024, 128), (1, 512))))  # reads the first half
    spans = cost.program_cost(program(halves[0], store, halves[1], inputs=[x], outputs=[out])).instruction_us
    assert spans[2][0] >= spans[1][1]  # S2: the second half's load waits for the read of the first (WAR per tile)


def test_accesses_to_other_partitions_of_one_tile_do_not_conflict():
    x = HbmTensor("x", (128, 512), F32, "input")
    t = tile("t", 128, 512)
    halves = [DmaCopy(AccessPattern(t, ((512, 64), (1, 512)), 512 * 64 * k), rows(x, 64, 512, 64 * k))
              for k in range(2)]
    spans = cost.program_cost(program(*halves, inputs=[x])).instruction_us
    assert spans[1][0] == spans[0][0]  # partitions 0-63 and 64-127: other DMA engines, no dependency


def test_overlapping_hbm_writes_keep_their_order():
    out = HbmTensor("out", (128, 64), F32, "output")
    a, b = tile("a", 128, 64), tile("b", 128, 64, address=256)
    insts = [DmaCopy(rows(out, 128, 64), whole(a)), DmaCopy(rows(out, 64, 64, 64), AccessPattern(b, ((64, 64), (1, 64))))]
    spans = cost.program_cost(program(*insts, outputs=[out])).instruction_us
    assert spans[1][0] == pytest.approx(max(spans[0][1], TRN1.packet_ns / 1e3))  # the first done, its engines free


def test_interleaved_hbm_stores_to_disjoint_columns_overlap():
    out = HbmTensor("out", (128, 128), F32, "output")
    left, right = tile("l", 128, 64), tile("r", 128, 64, address=256)
    insts = [DmaCopy(rows(out, 128, 64), whole(left)), DmaCopy(AccessPattern(out, ((128, 128), (1, 64)), 64), whole(right))]
    report = cost.program_cost(program(*insts, outputs=[out]))
    packet = cost.dma_packets(cost.dma_shape(insts[0]), TRN1)[0][1]
    # bounds overlap, elements do not: the second starts once the engines take its packets (D2b)
    assert total(report) == pytest.approx(cost.packet_occupancy_us(packet, TRN1) + packet + TRN1.dma_latency_us)


# -- targets and traced kernels ---------------------------------------------------------------------

def test_trn2_differs_from_trn1_as_documented():
    t1, t2 = cost.target_params("trn1"), cost.target_params("trn2")
    assert (t1.clock_ghz, t2.clock_ghz, t1.gpsimd_ghz, t2.gpsimd_ghz) == (1.12, 0.96, 1.4, 1.2)
    assert (t1.sbuf_partition_bytes, t2.sbuf_partition_bytes) == (192 * 1024, 224 * 1024)
    assert t2.dma_engine_gbps == 23  # the DMA bandwidth guide's; trn1's is fitted above its 17 (cost_fit.json)
    assert 294 <= t1.peak_dma_gbps < t2.peak_dma_gbps
    p = trace_resize((1, 30, 20, 8), (59, 38), kernel="seed")
    r1, r2 = cost.program_cost(p, "trn1"), cost.program_cost(p, "trn2")
    assert r1.cycles == r2.cycles
    assert r2.busy_us["vector"] == pytest.approx(r1.busy_us["vector"] * 1.12 / 0.96)
    assert r1.busy_us["dma"] >= r2.busy_us["dma"]  # 18.4 vs 23 B/ns per DMA engine


def test_unknown_target_names_the_choices():
    with pytest.raises(ValueError, match="'trn1', 'trn2'"):
        cost.program_cost(Program("empty"), "trn3")


SHAPES = [((1, 30, 20, 16), (59, 38)), ((2, 8, 8, 4), (16, 16)), ((1, 12, 12, 8), (4, 4)), ((1, 7, 41, 3), (5, 83))]


@pytest.mark.parametrize("kernel", ["seed", "exact"])
@pytest.mark.parametrize("in_shape, out_hw", SHAPES)
def test_counts_and_bytes_are_the_programs(kernel, in_shape, out_hw):
    p = trace_resize(in_shape, out_hw, kernel=kernel)
    report = cost.program_cost(p)
    assert {k: v for k, v in report.instructions.items() if v} == collections.Counter(i.engine for i in p.instructions)
    assert report.dma_count == len(p.dmas())
    assert report.dma_indirect == sum(d.is_indirect for d in p.dmas())
    out_bytes = p.outputs[0].size * 4
    stored = sum(d.nbytes for d in p.dmas() if d.dst.tensor is p.outputs[0])
    gathered = sum(d.nbytes for d in p.dmas() if d.src.tensor is p.inputs[0])
    assert stored == gathered == out_bytes  # every output pixel is gathered once and stored once
    assert report.dma_bytes == stored + gathered
    assert sum(report.dma_shapes.values()) == report.dma_count
    assert report.sbuf_high_water == p.sbuf_high_water


def test_hbm_intervals_answer_as_the_rect_table_does():
    """The segments of an HBM tensor give every access the start the plain table of rects gives it (SBUF's
    table, given an access's own bytes as its tile rect too), one rect at a time or an access's runs at once."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        table, intervals, now = cost._Memory(16), cost._Intervals(cost._Intervals.cut(range(81))), 0.0
        for _ in range(40):
            cuts = np.sort(rng.choice(np.arange(0, 80), size=2 * int(rng.integers(1, 5)), replace=False))
            rects = [(int(a), int(b), 0, 1) for a, b in cuts.reshape(-1, 2)]  # an access's runs: disjoint, sorted
            writing = bool(rng.random() < 0.5)
            ready = max(table.ready((r, r), writing) for r in rects)
            assert intervals.ready(intervals.span(intervals.starts, rects), writing) == ready
            finish = max(ready, now * rng.random()) + float(rng.integers(1, 5))  # not in program order
            now = max(now, finish)
            for r in rects:
                (table.write if writing else table.read)((r, r), finish)
            (intervals.write if writing else intervals.read)(intervals.span(intervals.starts, rects), finish)


@pytest.mark.parametrize("target", ["trn1", "trn2"])
def test_a_report_without_events_has_the_same_figures(target):
    """events=False (a cost-only benchmark) keeps no per-instruction schedule and changes no figure."""
    p = trace_resize((1, 30, 20, 16), (59, 38), kernel="seed")
    full, totals = cost.program_cost(p, target), cost.program_cost(p, target, events=False)
    assert full.events and not totals.events and not totals.timeline()
    assert full.modelled_us == max(e.end_us for e in full.events) + full.params.launch_us
    for name in ("modelled_us", "instructions", "cycles", "busy_us", "dma_count", "dma_bytes", "dma_indirect",
                 "dma_descriptors", "dma_shapes", "descriptor_gen_cycles"):
        assert getattr(totals, name) == getattr(full, name), name


def test_the_busy_bound_is_below_the_modelled_time_of_every_kernel():
    """busy_bound_us lets selection skip costing a Program; it must never exceed program_cost's time (a pair it
    wrongly skipped could have been the fastest)."""
    from resize_kernels import api
    from resize_kernels.kernels import FORWARD, GRAD, names
    rng, checked = np.random.default_rng(41), 0
    for _ in range(12):
        n, c = int(rng.integers(1, 4)), int(rng.choice([1, 3, 8, 64, 320]))
        h, w, oh, ow = (int(v) for v in rng.integers(1, 90, 4))
        dtype = str(rng.choice(["float32", "bfloat16", "uint8", "int16"]))
        programs = []
        for kernel in names(FORWARD):
            try:
                programs.append(trace_resize((n, h, w, c), (oh, ow), dtype, kernel, cached=False, sources=False))
            except Exception:  # a kernel that does not take the shape
                continue
        if dtype in ("float32", "bfloat16"):
            for kernel in names(GRAD):
                try:
                    programs.append(api.trace_resize_grad((n, oh, ow, c), (h, w), dtype, kernel, cached=False,
                                                          sources=False))
                except Exception:
                    continue
        for program in programs:
            for target in ("trn1", "trn2"):
                assert cost.busy_bound_us(program, target) <= cost.program_cost(program, target).modelled_us + 1e-9, \
                    (program.name, (n, h, w, c), (oh, ow), dtype, target)
                checked += 1
    assert checked > 100
