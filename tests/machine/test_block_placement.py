"""memory.place_blocks: first fit over time, as its docstring states, checked against a direct reading of it
(every fixed tile and placed block live during a block's life is busy), whichever way it finds the busy ranges."""

from hypothesis import given, settings
from hypothesis import strategies as st

from resize_kernels.intmath import ceil_div
from resize_kernels.machine.errors import SbufCapacityError
from resize_kernels.machine.memory import SBUF_ALIGNMENT, Lifetime, place_blocks

CAPACITY = 64 * SBUF_ALIGNMENT


def first_fit(capacity, fixed, blocks):
    """Each block in order of first use (larger first) at the lowest aligned offset free for its whole life."""
    placed = []
    for block in sorted(blocks, key=lambda b: (b.first, -b.size)):
        busy = sorted((t.offset, t.offset + t.size) for t in fixed + placed
                      if t.size and t.first <= block.last and block.first <= t.last)
        cursor = 0
        for lo, hi in busy:
            if lo - cursor >= block.size:
                break
            cursor = max(cursor, ceil_div(hi, SBUF_ALIGNMENT) * SBUF_ALIGNMENT)
        if capacity - cursor < block.size:
            return None
        placed.append(Lifetime(block.size, block.first, block.last, cursor))
    return [(b.first, b.last, b.size, b.offset) for b in placed]


lifetimes = st.tuples(st.integers(0, 60), st.integers(0, 20), st.integers(1, 8))
slots = st.integers(0, 7)  # fixed tiles at a few addresses, as the stack reuses them


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(lifetimes, slots), max_size=40), st.lists(lifetimes, min_size=1, max_size=12))
def test_blocks_take_the_lowest_range_free_for_their_whole_life(fixed_spec, block_spec):
    fixed = [Lifetime(size * SBUF_ALIGNMENT, first, first + span, slot * 8 * SBUF_ALIGNMENT)
             for (first, span, size), slot in fixed_spec]
    blocks = [Lifetime(size * SBUF_ALIGNMENT, first, first + span) for first, span, size in block_spec]
    want = first_fit(CAPACITY, fixed, blocks)
    try:
        place_blocks(CAPACITY, fixed, blocks)
    except SbufCapacityError:
        assert want is None
        return
    got = sorted((b.first, b.last, b.size, b.offset) for b in blocks)
    assert got == sorted(want)
