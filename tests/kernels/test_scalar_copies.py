"""The scalar engine's half of a chunk's column copies: 1-byte integers only, bit-exact, a disjoint span.

Its activation computes in float32, which holds every uint8 and int8 value, so a copy through it is exact for
those; a float tile never goes through it (NaN payloads, -0.0 and subnormals stay the vector engine's and
GpSimd's bit copies), nor does any wider one (the instruction counts know only the itemsize).
"""

import numpy as np
import pytest
from hypothesis import event, given, settings, strategies as st

import resize_kernels as rk
from resize_kernels import semantics
from resize_kernels.kernels.columns import SCALAR_COPY_DTYPES, split_groups
from resize_kernels.kernels.plan import column_groups, plan_resize

from conftest import assert_bits_equal, random_data


def members(groups):
    """{(output column, source column)} of every member of ``groups``, with the run each copies."""
    return {(g.out0 + k * g.out_step, g.src0 + k * g.src_step, g.repeat) for g in groups for k in range(g.count)}


@given(st.integers(1, 400), st.integers(1, 400), st.data())
def test_split_groups_cuts_the_members_at_the_column(in_w, out_w, data):
    runs = plan_resize((1, 1, in_w, 1), (1, 1, out_w, 1)).w.runs
    groups = column_groups(runs)
    mid = data.draw(st.sampled_from([r.first for r in runs]))
    left, right = split_groups(groups, mid)
    assert members(left) | members(right) == members(groups)
    assert all(out < mid for out, _, _ in members(left)) and all(out >= mid for out, _, _ in members(right))
    assert all(g.count >= 1 for g in left + right)


def uses_scalar_copies(program) -> bool:
    return any(i.opcode == "activation" and i.func == "copy" for i in program.instructions)


#: Width ratios whose maps take a few column groups (the copies' path; irregular ones take nc_n_gather).
RATIOS = (1.5, 2.0, 3.0, 0.75, 1.25, 4 / 3, 2.5, 5 / 3, 1.0)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2), st.integers(1, 40), st.integers(24, 300), st.integers(1, 40), st.sampled_from(RATIOS),
       st.integers(-1, 1), st.sampled_from([1, 3, 4]), st.sampled_from(["uint8", "int8"]),
       st.sampled_from(["rows", "sourcerows", "auto"]), st.integers(0, 2**32 - 1))
def test_1_byte_integers_copied_on_the_scalar_engine_equal_the_reference(n, in_h, in_w, out_h, ratio, nudge, c,
                                                                         dtype, kernel, seed):
    out_w = max(1, round(in_w * ratio) + nudge)
    x = random_data(np.random.default_rng(seed), (n, in_h, in_w, c), dtype)
    x.reshape(-1)[:2] = [np.iinfo(dtype).min, np.iinfo(dtype).max]  # the extremes survive float32
    try:
        program = rk.trace_resize(x.shape, (out_h, out_w), dtype, kernel=kernel)
    except rk.InvalidValueError:  # sourcerows does not take deep downsamples of the width
        event("not taken")
        return
    event(f"scalar copies: {uses_scalar_copies(program)}")
    assert_bits_equal(rk.resize_nearest(x, (out_h, out_w), kernel=kernel),
                      semantics.resize_nearest_reference(x, (out_h, out_w)))


@pytest.mark.parametrize("kernel", ["rows", "sourcerows"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_each_1_byte_dtype_takes_the_scalar_copies_exactly(dtype, kernel, rng):
    x = random_data(rng, (2, 5, 128, 3), dtype)
    x.reshape(-1)[:2] = [np.iinfo(dtype).min, np.iinfo(dtype).max]
    assert uses_scalar_copies(rk.trace_resize(x.shape, (9, 192), np.dtype(dtype).name, kernel=kernel))
    assert_bits_equal(rk.resize_nearest(x, (9, 192), kernel=kernel), semantics.resize_nearest_reference(x, (9, 192)))


def test_the_rgb_image_copies_on_three_engines_and_a_float_image_on_two():
    assert np.dtype("uint8") in SCALAR_COPY_DTYPES and np.dtype("int16") not in SCALAR_COPY_DTYPES
    assert uses_scalar_copies(rk.trace_resize((1, 256, 256, 3), (511, 383), "uint8"))
    for dtype in ("float32", "bfloat16", "float16", "int32", "int16", "uint16"):
        assert not uses_scalar_copies(rk.trace_resize((1, 256, 256, 3), (511, 383), dtype))
