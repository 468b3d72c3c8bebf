import ml_dtypes
import numpy as np
import pytest

from resize_kernels.machine import dtypes


def test_float_to_int_rounds_to_nearest_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999998, 2.5000002], np.float32)
    np.testing.assert_array_equal(dtypes.cast(x, np.int32), [0, 2, 2, 0, -2, -2, 2, 3])


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.int8, np.uint8])
def test_float_to_int_saturates_and_nan_is_zero(dtype):
    info = np.iinfo(dtype)
    x = np.array([np.inf, -np.inf, 1e30, -1e30, np.nan, info.max + 0.7, info.min - 0.7], np.float32)
    got = dtypes.cast(x, dtype)
    assert got.dtype == dtype
    want = [info.max, info.min, info.max, info.min, 0, info.max, info.min]
    np.testing.assert_array_equal(got.astype(np.int64), want)


def test_float32_to_bfloat16_and_float16_round_to_nearest_even():
    # 1 + 2**-8 is halfway between two bf16 neighbours: ties go to the even one (1.0).
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-11], np.float32)
    np.testing.assert_array_equal(dtypes.cast(x, ml_dtypes.bfloat16).astype(np.float32), [1.0, 1 + 2**-6, 1.0])
    np.testing.assert_array_equal(dtypes.cast(x, np.float16).astype(np.float32), [1 + 2**-8, 1 + 3 * 2**-8, 1.0])


def test_int_to_float32_loses_precision_above_2_24():
    x = np.array([2**24 + 1, 2**24 + 3], np.int32)
    np.testing.assert_array_equal(dtypes.to_f32(x), np.array([2**24, 2**24 + 4], np.float32))


@pytest.mark.parametrize("bad", [np.float64, np.complex64, "float64", np.int64, "nonsense"])
def test_unsupported_dtypes_are_named(bad):
    with pytest.raises(TypeError, match="requires one of the dtypes float32, bfloat16"):
        dtypes.as_dtype(bad)


def test_supported_dtypes():
    assert [dtypes.short_name(d) for d in dtypes.SUPPORTED] == ["f32", "bf16", "f16", "i32", "i16", "i8", "u8", "u16", "u32",
                                                               "f8e4m3", "f8e5m2", "f8e4m3fn"]
    assert dtypes.as_dtype("bf16") == dtypes.bfloat16
