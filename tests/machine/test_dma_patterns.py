"""DMA access patterns the faster kernels rely on: step-0 (broadcast) reads and gathers of several rows per partition.

A [0, n] pair reads the same elements n times (the NKI access-pattern form of a
broadcast); it is legal on a DMA source, in SBUF or HBM. A gather whose free
pairs step by whole rows of the indexed tensor reads, per partition, several
rows at fixed distances from its indexed row.
"""

import numpy as np

from resize_kernels.machine.simulator import run
from resize_kernels.nki import trace
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl

from conftest import assert_bits_equal


def simulate(kernel, *inputs):
    return run(trace(kernel, *inputs), list(inputs))[0]


def test_sbuf_source_with_step_0_pairs_repeats_rows_and_elements():
    x = np.arange(3 * 4 * 2, dtype=np.float32).reshape(3, 4, 2)  # 3 rows of 4 pixels of 2 channels

    def k(x):
        t = nl.ndarray((3, 8), dtype=nl.float32)
        nisa.dma_copy(dst=t, src=x.ap(pattern=[[8, 3], [1, 8]]))
        out = nl.ndarray((3, 2, 4, 3, 2), dtype=nl.float32, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=t.ap(pattern=[[8, 3], [0, 2], [2, 4], [0, 3], [1, 2]]))
        return out
    want = np.broadcast_to(x[:, None, :, None, :], (3, 2, 4, 3, 2))
    assert_bits_equal(simulate(k, x), np.ascontiguousarray(want))


def test_hbm_source_with_a_step_0_pair_broadcasts():
    x = np.arange(6, dtype=np.int16).reshape(2, 3)

    def k(x):
        t = nl.ndarray((2, 4, 3), dtype=nl.int16)
        nisa.dma_copy(dst=t, src=x.ap(pattern=[[3, 2], [0, 4], [1, 3]]))
        out = nl.ndarray((2, 4, 3), dtype=nl.int16, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=t)
        return out
    assert_bits_equal(simulate(k, x), np.ascontiguousarray(np.broadcast_to(x[:, None, :], (2, 4, 3))))


def test_gather_of_several_rows_per_partition():
    rows = np.random.default_rng(0).standard_normal((40, 6)).astype(np.float32)
    idx = np.array([[3], [0], [7], [3]], np.int32)

    def k(rows, idx):
        i = nl.ndarray((4, 1), dtype=nl.int32)
        nisa.dma_copy(dst=i, src=idx)
        t = nl.ndarray((4, 2, 3, 4), dtype=nl.float32)
        # partition p: rows 2 + idx[p] + 20 b + 5 r (b < 2, r < 3), channels 1..4
        nisa.dma_copy(dst=t, src=rows.ap(pattern=[[6, 4], [120, 2], [30, 3], [1, 4]], offset=2 * 6 + 1,
                                         vector_offset=i, indirect_dim=0))
        out = nl.ndarray((4, 2, 3, 4), dtype=nl.float32, buffer=nl.shared_hbm, name="out")
        nisa.dma_copy(dst=out, src=t)
        return out
    b, r = np.ogrid[:2, :3]
    want = np.stack([rows[2 + i + 20 * b + 5 * r][..., 1:5] for i in idx[:, 0]])
    assert_bits_equal(simulate(k, rows, idx), want)
