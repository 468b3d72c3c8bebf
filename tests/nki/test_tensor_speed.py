"""``t[a:b]`` on a tensor handle (the partition rows of a tile) takes a short path: the general walk's pattern."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from resize_kernels.errors import InvalidValueError
from resize_kernels.nki import language as nl
from resize_kernels.nki.index import IndexedAccess
from resize_kernels.nki.tensor import TensorSpec
from resize_kernels.nki.tracer import trace

ends = st.one_of(st.none(), st.integers(-140, 140))


@given(st.lists(st.integers(1, 6), min_size=1, max_size=3), st.integers(1, 128), ends, ends,
       st.sampled_from(["sbuf", "hbm"]))
def test_partition_slice_is_the_general_walk(rest, rows, start, stop, buffer):
    shape = (rows, *rest)
    seen = []

    def kernel(x):
        t = nl.ndarray(shape, dtype=nl.float32, buffer=nl.sbuf if buffer == "sbuf" else nl.hbm)
        key = slice(start, stop)
        try:
            fast = t[key]
        except InvalidValueError as e:
            with pytest.raises(InvalidValueError) as general:
                t[(key,)]
            assert str(general.value) == str(e)
            seen.append(None)
        else:
            general = t[(key,)]  # a tuple key: the general walk
            assert type(fast) is type(general) and fast.tensor is general.tensor
            if isinstance(fast, IndexedAccess):  # an HBM slice past the end, for a mask to cut
                assert fast.key == general.key and fast._walk() == general._walk()
            else:
                assert (fast.pattern, fast.offset, fast.row_size, fast.shape) == \
                    (general.pattern, general.offset, general.row_size, general.shape)
            seen.append(fast)
        out = nl.ndarray((1,), dtype=nl.float32, buffer=nl.shared_hbm)
        return out

    trace(kernel, TensorSpec((1,), np.dtype(np.float32)))
    assert len(seen) == 1
