"""``nl.ndarray``'s shape of plain ints takes a short path: the general one's result."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from resize_kernels.errors import InvalidValueError
from resize_kernels.nki import language as nl


def _general_shape(shape):
    """The shape reading without the short path (as it was written)."""
    shape = tuple(shape)
    marked = [axis for axis, n in enumerate(shape) if isinstance(n, nl.par_dim)]
    if len(marked) > 1:
        raise InvalidValueError("two marks")
    return tuple(int(n) for n in shape), (marked[0] if marked else 0)


dims = st.one_of(st.integers(1, 300), st.integers(1, 300).map(np.int64), st.integers(1, 300).map(nl.par_dim),
                 st.just(True))


@given(st.lists(dims, min_size=1, max_size=4), st.sampled_from([tuple, list]))
def test_shape_is_the_general_reading(shape, kind):
    try:
        want = _general_shape(kind(shape))
    except InvalidValueError:
        with pytest.raises(InvalidValueError):
            nl._shape(kind(shape))
        return
    got = nl._shape(kind(shape))
    assert got == want and all(type(n) is int for n in got[0])
