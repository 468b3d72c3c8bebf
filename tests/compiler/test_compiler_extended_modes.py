"""compile_module(..., extended_modes=True): ResizeNearest calls with align_corners or half_pixel_centers lower
to kernels with TensorFlow's ResizeNearestNeighbor map, exactly; without it, the seed's rejections stand verbatim.
"""

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import resize_kernels as rk
from resize_kernels import semantics as S
from resize_kernels.compiler.hlo import Shape, custom_call_module, parse_hlo_module, print_hlo_module
from resize_kernels.compiler.hlo.shape import element_type
from resize_kernels.compiler.passes import ValidationError

FLAGS = {"align_corners": '"10"', "half_pixel_centers": '"01"'}


def module_text(target: str, in_shape, out_shape, dtype, flags: str) -> str:
    return print_hlo_module(custom_call_module(target, Shape(element_type(dtype), in_shape),
                                               Shape(element_type(dtype), out_shape), flags))


@pytest.mark.parametrize("mode", FLAGS)
def test_the_default_still_rejects_each_mode_with_the_seeds_message(mode):
    text = module_text("ResizeNearest", (1, 4, 4, 2), (1, 8, 8, 2), np.float32, FLAGS[mode])
    with pytest.raises(ValidationError) as info:
        rk.compile_hlo(text)
    assert str(info.value) == (f"ResizeNearest: {mode}=true is not supported in this implementation.\n"
                               f"Set {mode}=false in your ResizeNearest configuration.")


@pytest.mark.parametrize("mode", FLAGS)
@pytest.mark.parametrize("in_shape, out_hw, dtype", [((2, 5, 7, 3), (9, 13), np.float32),
                                                     ((1, 30, 20, 8), (59, 38), ml_dtypes.bfloat16),
                                                     ((1, 40, 3, 1), (130, 5), np.uint8),
                                                     ((3, 9, 13, 2), (5, 7), np.float16),
                                                     ((1, 1, 6, 2), (1, 200), np.int32)])
def test_extended_modes_run_tensorflows_map_exactly(mode, in_shape, out_hw, dtype):
    out_shape = (in_shape[0], *out_hw, in_shape[3])
    loaded = rk.compile_hlo(module_text("ResizeNearest", in_shape, out_shape, dtype, FLAGS[mode]), extended_modes=True)
    x = np.arange(np.prod(in_shape)).reshape(in_shape).astype(dtype)
    out = loaded(x)
    y = out[0] if isinstance(out, tuple) else out
    want = S.convention_reference(x, out_hw, S.TENSORFLOW_MODES[mode])
    assert np.array_equal(np.asarray(y).view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("mode", FLAGS)
def test_the_lowered_module_names_the_mode_and_parses_again(mode):
    loaded = rk.compile_hlo(module_text("ResizeNearest", (1, 5, 7, 2), (1, 9, 13, 2), np.float32, FLAGS[mode]),
                            extended_modes=True)
    text = print_hlo_module(loaded.module)
    assert f'resize_mode="{mode}"' in text and 'kernel_name="ResizeNearest"' in text
    assert print_hlo_module(parse_hlo_module(text)) == text


def test_both_flags_are_rejected_even_when_extended():
    text = module_text("ResizeNearest", (1, 4, 4, 2), (1, 8, 8, 2), np.float32, '"11"')
    with pytest.raises(ValidationError, match="sets both align_corners and half_pixel_centers.*set one of them"):
        rk.compile_hlo(text, extended_modes=True)


@pytest.mark.parametrize("mode", FLAGS)
@pytest.mark.parametrize("dy_hw, in_hw", [((8, 8), (4, 4)), ((9, 13), (5, 7))])
def test_a_gradient_with_a_mode_sums_over_that_map(mode, dy_hw, in_hw):
    """Block ratios (8x8 -> 4x4) too: the reduce-window rewrite holds for o // k only, so a mode's gradient goes to
    the gradient kernel with the mode's convention."""
    dy_shape, dx_shape = (2, *dy_hw, 3), (2, *in_hw, 3)
    loaded = rk.compile_hlo(module_text("ResizeNearestGrad", dy_shape, dx_shape, np.float32, FLAGS[mode]),
                            extended_modes=True)
    assert "reduce-window" not in print_hlo_module(loaded.module)
    dy = np.random.default_rng(0).standard_normal(dy_shape).astype(np.float32)
    out = loaded(dy)
    dx = out[0] if isinstance(out, tuple) else out
    want = S.resize_nearest_grad_reference(dy, in_hw, S.TENSORFLOW_MODES[mode])
    assert np.array_equal(np.asarray(dx).view(np.uint32), want.view(np.uint32))


def test_extended_modes_need_a_kernel_that_takes_maps():
    text = module_text("ResizeNearest", (1, 4, 4, 2), (1, 8, 8, 2), np.float32, '"10"')
    with pytest.raises(ValueError, match="extended_modes requires a forward kernel that takes other maps.*'rows'"):
        rk.compile_hlo(text, "sourcerows", extended_modes=True)


def test_the_command_line_compiles_and_checks_an_extended_mode(tmp_path):
    path = tmp_path / "align.hlo"
    path.write_text(module_text("ResizeNearest", (1, 5, 7, 2), (1, 9, 13, 2), np.float32, FLAGS["align_corners"]))
    cli = [sys.executable, "-m", "resize_kernels", "compile", str(path), "--run"]
    rejected = subprocess.run(cli, capture_output=True, text=True)
    assert rejected.returncode == 1 and "align_corners=true is not supported" in rejected.stderr
    ran = subprocess.run(cli + ["--extended-modes"], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert 'resize_mode="align_corners"' in ran.stdout
    assert "bit-identical to the reference (TensorFlow align_corners" in ran.stdout and ": yes" in ran.stdout
