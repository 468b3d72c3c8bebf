"""ResizeNearestGrad through the compiler: block ratios as reduce-window (the true gradient), others as the kernel."""

import dataclasses

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import compile_hlo
from resize_kernels import api, semantics
from resize_kernels.compiler import registry as reg
from resize_kernels.compiler.hlo import IntList, Literal, Shape, String, Window, parse_hlo_module, print_hlo_module
from resize_kernels.compiler.passes import (ValidationError, average_pool_resize_grad, block_factors,
                                            canonicalize_resize_grad, inline_calls, lower_resize_nearest,
                                            lower_resize_nearest_grad, validate_resize)
from resize_kernels.compiler.pipeline import PASSES
from resize_kernels.kernels import GRAD as GRAD_OP
from resize_kernels.select import Selected

from conftest import assert_bits_equal
from hlo_texts import NUMPY_DTYPES, ROOT, ZERO_ZERO, custom_call_module

GRAD = f'custom_call_target="ResizeNearestGrad", backend_config={ZERO_ZERO}'
SD2 = ((1, 59, 38, 8), (1, 30, 20, 8))
TRAINING = ROOT / "examples" / "unet_train_torch_xla.hlo"


def grad_module(dy=(1, 4, 6, 3), dx=(1, 2, 2, 3), dtype="f32") -> str:
    """ROOT rn = ResizeNearestGrad(p0): dy of shape ``dy`` summed onto ``dx``, NHWC as the call sees it."""
    return custom_call_module(operand=f"{dtype}[{','.join(map(str, dy))}]",
                              result=f"{dtype}[{','.join(map(str, dx))}]", attributes=GRAD)


def small_ints(rng, shape, dtype):
    """Integers in [-8, 8]: every float32 partial sum is exact, so any summation order gives the same bits."""
    return rng.integers(-8, 9, size=shape).astype(np.float32).astype(dtype)


def run_grad(dy, dx_dims, dtype="f32", **options):
    return compile_hlo(grad_module(dy.shape, dx_dims, dtype), **options)(dy)


# ----- what the rewrite produces --------------------------------------------------------------

def test_a_block_ratio_becomes_a_reduce_window_sum_without_a_divide():
    printed = str(compile_hlo(grad_module((2, 8, 9, 3), (2, 4, 3, 3))))
    assert "add_f32 {\n  lhs = f32[] parameter(0)\n  rhs = f32[] parameter(1)\n  ROOT sum = f32[] add(lhs, rhs)\n}" \
        in printed
    assert "  rn.zero = f32[] constant(0)\n" in printed
    assert ("  ROOT rn = f32[2,4,3,3] reduce-window(p0, rn.zero), window={size=1x2x3x1 stride=1x2x3x1}, "
            "to_apply=add_f32\n") in printed
    assert "divide" not in printed and "custom-call" not in printed and "InternalNativeNkiKernel" not in printed


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_half_types_sum_in_float32_and_round_once(dtype):
    printed = print_hlo_module(compile_hlo(grad_module((1, 4, 4, 2), (1, 2, 2, 2), dtype)).module)
    assert printed.endswith(
        f"  rn.widen = f32[1,4,4,2] convert(p0)\n"
        f"  rn.zero = f32[] constant(0)\n"
        f"  rn.sum = f32[1,2,2,2] reduce-window(rn.widen, rn.zero), window={{size=1x2x2x1 stride=1x2x2x1}}, "
        f"to_apply=add_f32\n"
        f"  ROOT rn = {dtype}[1,2,2,2] convert(rn.sum)\n}}\n")


def test_other_ratios_become_the_gradient_kernel():
    compiled = compile_hlo(grad_module(*SD2))
    printed = str(compiled)
    assert '  ROOT rn = f32[1,30,20,8] InternalNativeNkiKernel(p0), kernel_name="ResizeNearestGrad"\n' in printed
    assert "\n// rn: kernel ResizeNearestGrad, traced into\n//   program resize_nearest_grad_" in printed
    assert "//     chosen:    padded, the fastest of" in printed  # 71 KB of dy: the candidates compared
    assert "reduce-window" not in printed


def test_the_printed_lowered_module_parses_back():
    for dims in [((1, 4, 6, 3), (1, 2, 2, 3)), SD2]:
        compiled = compile_hlo(grad_module(*dims, "bf16"), resize_grad_average_pool=True)
        assert print_hlo_module(parse_hlo_module(str(compiled))) == print_hlo_module(compiled.module)


def test_block_factors():
    assert block_factors((8, 9), (4, 3)) == (2, 3)
    assert block_factors((8, 3), (1, 3)) == (8, 1)  # one axis at a time, as torch_xla splits
    assert block_factors((59, 38), (30, 20)) is None
    assert block_factors((4, 4), (8, 4)) is None  # a downsample's gradient
    # An integer ratio whose float32 map is not blocks: 2 -> 82 sends output 41 to source 0 (41 * f32(1/41) < 1).
    assert semantics.source_index(2, 82)[41] == 0
    assert block_factors((82, 4), (2, 4)) is None


def test_an_integer_ratio_whose_float32_map_is_not_blocks_gets_the_kernel(rng):
    """A window sum would be wrong here: it would give dx[0] 41 dy rows where the forward copied source 0 to 42."""
    dy = small_ints(rng, (1, 82, 3, 2), np.float32)
    compiled = compile_hlo(grad_module(dy.shape, (1, 2, 3, 2)))
    assert 'kernel_name="ResizeNearestGrad"' in str(compiled)
    want = semantics.resize_nearest_grad_reference(dy, (2, 3))
    assert_bits_equal(compiled(dy), want)
    window_sum = dy.reshape(1, 2, 41, 3, 2).sum(axis=2)
    assert not np.array_equal(window_sum, want)


# ----- the gradient's values ------------------------------------------------------------------

SHAPES = [((2, 8, 9, 3), (2, 4, 3, 3)), ((1, 8, 3, 2), (1, 1, 3, 2)), ((1, 3, 12, 2), (1, 3, 3, 2)),
          ((1, 24, 16, 5), (1, 3, 2, 5)), SD2, ((1, 82, 3, 2), (1, 2, 3, 2)), ((1, 4, 5, 2), (1, 7, 9, 2))]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("dy_dims, dx_dims", SHAPES)
def test_equals_the_reference_bit_for_bit_on_small_integers(dy_dims, dx_dims, dtype, rng):
    dy = small_ints(rng, dy_dims, NUMPY_DTYPES[dtype])
    assert_bits_equal(run_grad(dy, dx_dims, dtype), semantics.resize_nearest_grad_reference(dy, dx_dims[1:3]))


@settings(max_examples=40, deadline=None)
@given(k_h=st.integers(1, 9), k_w=st.integers(1, 9), h=st.integers(1, 6), w=st.integers(1, 6),
       c=st.integers(1, 4), dtype=st.sampled_from(["f32", "f16", "bf16"]), seed=st.integers(0, 2**32 - 1))
def test_block_ratios_equal_the_reference_bit_for_bit_on_random_data(k_h, k_w, h, w, c, dtype, seed):
    """reduce-window adds each window in row-major order from +0.0, the reference's order, so rounding agrees too."""
    dy = np.random.default_rng(seed).standard_normal((2, h * k_h, w * k_w, c)).astype(NUMPY_DTYPES[dtype])
    assert_bits_equal(run_grad(dy, (2, h, w, c), dtype), semantics.resize_nearest_grad_reference(dy, (h, w)))


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_the_average_pool_option_is_exactly_the_sum_over_k_h_k_w(dtype, rng):
    dy = rng.standard_normal((2, 6, 12, 3)).astype(NUMPY_DTYPES[dtype])
    total = semantics.resize_nearest_grad_reference(dy.astype(np.float32), (2, 3))  # the float32 sum
    mean = run_grad(dy, (2, 2, 3, 3), dtype, resize_grad_average_pool=True)
    assert_bits_equal(mean, (total / np.float32(3 * 4)).astype(dy.dtype))
    assert_bits_equal(run_grad(dy, (2, 2, 3, 3), dtype), total.astype(dy.dtype))  # the default is the sum


def test_the_average_pool_is_never_the_default():
    assert average_pool_resize_grad not in PASSES
    printed = print_hlo_module(compile_hlo(grad_module()).module)
    assert "divide" not in printed and "constant(6)" not in printed
    printed = print_hlo_module(compile_hlo(grad_module(), resize_grad_average_pool=True).module)
    assert "  rn.count = f32[] constant(6)\n" in printed
    assert "  ROOT rn = f32[1,2,2,3] divide(rn.sum, rn.counts)\n" in printed


def test_average_pool_leaves_non_block_ratios_to_the_kernel(rng):
    dy = small_ints(rng, SD2[0], np.float32)
    assert_bits_equal(run_grad(dy, SD2[1], resize_grad_average_pool=True),
                      semantics.resize_nearest_grad_reference(dy, SD2[1][1:3]))


def torch_autograd_nhwc(dy: np.ndarray, in_hw) -> np.ndarray:
    n, _, _, c = dy.shape
    x = torch.zeros(n, c, *in_hw, requires_grad=True)
    y = torch.nn.functional.interpolate(x, size=dy.shape[1:3], mode="nearest")
    y.backward(torch.from_numpy(dy).permute(0, 3, 1, 2))
    return x.grad.permute(0, 2, 3, 1).numpy()


@pytest.mark.parametrize("dy_dims, dx_dims", [SD2, ((2, 24, 16, 5), (2, 3, 2, 5))])
def test_equals_torch_autograd_to_float32_rounding(dy_dims, dx_dims, rng):
    """Random float32 dy against torch: each of two orders of summing k float32 terms is within
    (k - 1) eps32 sum|dy| of the exact sum, so they differ by at most 2 (k - 1) eps32 sum|dy|.
    (Torch's CPU backward adds in the reference's order today, so the results are also equal.)
    """
    dy = rng.standard_normal(dy_dims).astype(np.float32)
    got, want = run_grad(dy, dx_dims), torch_autograd_nhwc(dy, dx_dims[1:3])
    k = semantics.resize_nearest_grad_reference(np.ones_like(dy), dx_dims[1:3])
    abs_sum = semantics.resize_nearest_grad_reference(np.abs(dy), dx_dims[1:3])
    assert (np.abs(got - want) <= 2 * np.maximum(k - 1, 0) * np.finfo(np.float32).eps * abs_sum).all()


# ----- the passes one at a time --------------------------------------------------------------

def test_passes_run_validate_canonicalize_then_lower():
    assert PASSES == (inline_calls, validate_resize, canonicalize_resize_grad, lower_resize_nearest,
                      lower_resize_nearest_grad)


def test_canonicalize_alone_rewrites_block_ratios_and_leaves_the_rest():
    module = parse_hlo_module(grad_module((1, 4, 4, 2), (1, 2, 2, 2)))
    canonicalize_resize_grad(module)
    assert module.entry.root.opcode == "reduce-window" and module.entry.root.name == "rn"
    module = parse_hlo_module(grad_module(*SD2))
    before = print_hlo_module(module)
    canonicalize_resize_grad(module)
    assert print_hlo_module(module) == before


def test_lower_alone_sends_every_gradient_to_the_kernel(rng):
    module = parse_hlo_module(grad_module((1, 4, 4, 2), (1, 2, 2, 2)))
    lower_resize_nearest_grad(module)
    root = module.entry.root
    assert (root.opcode, root.kernel_name) == ("InternalNativeNkiKernel", "ResizeNearestGrad")
    assert str(root.attributes["kernel_name"]) == '"ResizeNearestGrad"'


def test_the_rewrite_builds_typed_values_not_text():
    module = parse_hlo_module(grad_module((2, 8, 9, 3), (2, 4, 3, 3)))
    average_pool_resize_grad(module)
    entry = module.entry
    assert entry.instruction("rn.sum").attributes["window"] == Window(size=(1, 2, 3, 1), stride=(1, 2, 3, 1))
    assert entry.instruction("rn.zero").payload == Literal(Shape("f32", ()), 0)
    assert entry.instruction("rn.count").payload == Literal(Shape("f32", ()), 6)
    assert entry.instruction("rn.counts").attributes["dimensions"] == IntList()
    assert [p.payload for p in module.computation("add_f32").parameters] == [0, 1]
    kernel = parse_hlo_module(grad_module(*SD2))
    lower_resize_nearest_grad(kernel)
    assert kernel.entry.root.attributes["kernel_name"] == String("ResizeNearestGrad")


def test_the_rewrite_picks_fresh_names():
    text = grad_module().replace("ROOT rn", "rn.zero = f32[] constant(1)\n  ROOT rn")
    negate = "add_f32 {\n  a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n}\n\n"
    text = text.replace("ENTRY main", negate + "ENTRY main")
    module = parse_hlo_module(text)
    canonicalize_resize_grad(module)
    assert module.entry.root.operands[1].name == "rn.zero.1"
    assert module.entry.root.attributes["to_apply"] == "add_f32.1"
    assert [c.name for c in module.computations] == ["add_f32", "add_f32.1", "main"]


def test_one_add_computation_serves_every_call():
    module = parse_hlo_module(TRAINING.read_text())
    validate_resize(module)
    canonicalize_resize_grad(module)
    assert [c.name for c in module.computations] == ["add_f32", "SyncTensorsGraph.27"]


def test_a_gradient_must_be_a_float():
    with pytest.raises(ValidationError) as info:
        compile_hlo(grad_module(dtype="s32"))
    assert str(info.value) == ("ResizeNearestGrad custom-call 'rn' requires dtype float32, float16, bfloat16, "
                               "got int32; a gradient is real-valued")


def test_a_downsamples_gradient_is_the_kernels_too(rng):
    """torch_xla emits ResizeNearestGrad for every ratio; dx pixels the forward skipped get 0."""
    dy = small_ints(rng, (1, 4, 5, 2), np.float32)
    assert_bits_equal(run_grad(dy, (1, 7, 9, 2)), semantics.resize_nearest_grad_reference(dy, (7, 9)))


# ----- _get_resize_args stays the forward's ----------------------------------------------------

@pytest.fixture
def resize_args_calls(monkeypatch):
    """Every call of _get_resize_args, wherever the registry or the module holds it."""
    calls = []

    def spy(inst):
        calls.append(inst.name)
        return {"out_shape": inst.results[0].access_shape}

    monkeypatch.setattr(reg, "_get_resize_args", spy)
    monkeypatch.setitem(reg.registry, "ResizeNearest",
                        dataclasses.replace(reg.registry["ResizeNearest"], additional_args_builder=spy))
    return calls


@pytest.mark.parametrize("average_pool", [False, True])
def test_the_gradient_never_calls_get_resize_args(resize_args_calls, average_pool, rng):
    for dy_dims, dx_dims in [((1, 4, 6, 3), (1, 2, 2, 3)), SD2]:
        dy = small_ints(rng, dy_dims, np.float32)
        run_grad(dy, dx_dims, resize_grad_average_pool=average_pool)
    assert resize_args_calls == []


def test_only_the_forward_calls_of_the_training_module_call_get_resize_args(resize_args_calls):
    compile_hlo(TRAINING.read_text())
    assert resize_args_calls == ["custom-call.12", "custom-call.18"]


def test_the_gradient_kernel_has_its_own_registry_entry():
    config = reg.registry["ResizeNearestGrad"]
    assert config == reg.InternalKernelConfig(kernel_func=Selected(GRAD_OP), operand_count=1,
                                              additional_args_builder=reg._get_resize_grad_args)
    call = parse_hlo_module(grad_module(*SD2)).entry.root
    assert reg._get_resize_grad_args(call) == {"in_shape": (1, 30, 20, 8)}


# ----- rk.resize_nearest_grad: the integer path or the kernel ----------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_both_paths_equal_the_reference(dtype, rng):
    dy = rng.standard_normal((2, 8, 9, 3)).astype(dtype)
    want = semantics.resize_nearest_grad_reference(dy, (4, 3))
    for kernel in (None, "reduce_window", "general"):
        assert_bits_equal(rk.resize_nearest_grad(dy, (4, 3), kernel=kernel), want)


def test_the_default_takes_reduce_window_for_block_ratios_only(rng):
    api._reduce_window_grad.cache_clear()
    rk.resize_nearest_grad(small_ints(rng, (1, 59, 38, 2), np.float32), (30, 20))
    assert api._reduce_window_grad.cache_info().currsize == 0
    rk.resize_nearest_grad(small_ints(rng, (1, 8, 8, 2), np.float32), (4, 4))
    rk.resize_nearest_grad(small_ints(rng, (1, 8, 8, 2), np.float32), (4, 4))
    assert api._reduce_window_grad.cache_info()[:2] == (1, 1)  # (hits, misses): compiled once


def test_reduce_window_refuses_other_ratios(rng):
    with pytest.raises(ValueError, match=r"kernel='reduce_window' requires .* got dy \(59, 38\) for input "
                                         r"\(30, 20\); use kernel='general'"):
        rk.resize_nearest_grad(small_ints(rng, (1, 59, 38, 2), np.float32), (30, 20), kernel="reduce_window")
    with pytest.raises(ValueError, match="no kernel 'pool'; choose one of 'auto', 'rows', 'padded', 'general', 'reduce_window'"):
        rk.resize_nearest_grad(small_ints(rng, (1, 8, 8, 2), np.float32), (4, 4), kernel="pool")


# ----- the torch_xla-shaped training example ---------------------------------------------------

def nchw(reference, x: np.ndarray, hw) -> np.ndarray:
    """An NHWC reference applied to an NCHW array, as the example's transposes do."""
    return reference(x.transpose(0, 2, 3, 1), hw).transpose(0, 3, 1, 2)


def test_the_training_example_lowers_as_expected():
    printed = print_hlo_module(compile_hlo(TRAINING.read_text()).module)
    assert printed.count("reduce-window(") == 3  # the 8x gradient's two one-axis calls and the bf16 2x one
    assert "window={size=1x1x8x1 stride=1x1x8x1}" in printed and "window={size=1x8x1x1 stride=1x8x1x1}" in printed
    assert printed.count('kernel_name="ResizeNearestGrad"') == 1  # the SD2 59x38 -> 30x20 gradient
    assert printed.count('kernel_name="ResizeNearest"') == 2


def test_the_training_example_computes_the_reference(rng):
    compiled = compile_hlo(TRAINING.read_text())
    shapes = [p.shape for p in compiled.module.entry.parameters]
    args = [small_ints(rng, s.dims, s.numpy_dtype) for s in shapes]
    x_sd2, dy_sd2, x8, dy8, dy2 = args
    y_sd2, dx_sd2, y8, dx8, dx2 = compiled(*args)
    assert_bits_equal(y_sd2, nchw(semantics.resize_nearest_reference, x_sd2, (59, 38)))
    assert_bits_equal(y8, nchw(semantics.resize_nearest_reference, x8, (128, 128)))
    assert_bits_equal(dx_sd2, nchw(semantics.resize_nearest_grad_reference, dy_sd2, (30, 20)))
    assert_bits_equal(dx8, nchw(semantics.resize_nearest_grad_reference, dy8, (16, 16)))
    assert_bits_equal(dx2, nchw(semantics.resize_nearest_grad_reference, dy2, (12, 10)))
