"""NCHW arrays given to the NHWC API: a LayoutWarning where the shape looks NCHW, and layout="NCHW" to mean it."""

import warnings

import numpy as np
import pytest

import resize_kernels as rk
from resize_kernels.api import looks_nchw
from resize_kernels.errors import InvalidValueError, LayoutWarning

from conftest import assert_bits_equal, random_data


@pytest.mark.parametrize("shape", [(1, 3, 224, 224), (2, 1, 40, 32), (1, 4, 64, 64), (2, 320, 16, 16)])
def test_an_nchw_image_warns_naming_the_layout_and_the_fix(shape):
    assert looks_nchw(shape)
    x = np.zeros(shape, np.float32)
    with pytest.warns(LayoutWarning, match=rf"looks NCHW \({shape[1]} channels of {shape[2]}x{shape[3]}\).*"
                                           r"pass layout='NCHW'.*or layout='NHWC' if it is NHWC") as record:
        rk.resize_nearest(x, (8, 8))
    assert issubclass(LayoutWarning, UserWarning) and record[0].filename == __file__  # points at the call


@pytest.mark.parametrize("shape", [(10, 30, 20, 1280),  # SD2's UNet
                                   (1, 64, 64, 1), (2, 32, 48, 3), (1, 64, 64, 4),  # a mask, RGB, a latent
                                   (1, 4, 6, 1280), (1, 4, 4, 1280), (1, 8, 8, 1280), (1, 64, 64, 320),  # features
                                   (1, 1, 5, 7), (2, 3, 5, 4), (1, 2, 9, 1), (1, 64, 32, 32)])
def test_nhwc_inputs_do_not_warn(shape):
    assert not looks_nchw(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rk.resize_nearest(np.zeros(shape, np.float32), (3, 5))


def test_saying_the_layout_does_not_warn():
    x = np.zeros((1, 3, 224, 224), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rk.resize_nearest(x, (16, 8), layout="NHWC").shape == (1, 16, 8, 224)
        assert rk.resize_nearest(x, (16, 8), layout="NCHW").shape == (1, 3, 16, 8)


@pytest.mark.parametrize("shape, size", [((1, 3, 7, 5), (13, 9)), ((2, 4, 30, 20), (59, 38)), ((3, 1, 9, 16), 4),
                                         ((1, 64, 11, 13), (5, 31))])
def test_nchw_equals_torch_bit_for_bit(rng, shape, size):
    torch = pytest.importorskip("torch")
    F = pytest.importorskip("torch.nn.functional")
    x = random_data(rng, shape, np.float32)
    got = rk.resize_nearest(x, size, layout="NCHW")
    want = F.interpolate(torch.from_numpy(x), size=size, mode="nearest").numpy()
    assert got.flags.c_contiguous
    assert_bits_equal(got, want)
    assert_bits_equal(got, np.ascontiguousarray(rk.resize_nearest(x.transpose(0, 2, 3, 1), size).transpose(0, 3, 1, 2)))


@pytest.mark.parametrize("layout", ["nchw", "NCW", "", 4, b"NCHW"])
def test_a_bad_layout_names_the_choices(layout):
    with pytest.raises(InvalidValueError, match=rf"resize_nearest requires layout 'NHWC' or 'NCHW', got "
                                                rf"{repr(layout).replace('(', '.').replace(')', '.')}; "):
        rk.resize_nearest(np.zeros((1, 4, 4, 1), np.float32), 2, layout=layout)


def test_an_nchw_array_of_another_rank_names_its_axes():
    with pytest.raises(InvalidValueError, match=r"requires an NCHW array of rank 4 \(batch, channels, height, width\)"):
        rk.resize_nearest(np.zeros((3, 4, 4), np.float32), 2, layout="NCHW")
