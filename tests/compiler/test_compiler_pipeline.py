"""compile_module then runtime.load (rk.compile_hlo) end to end: the torch_xla-shaped upsample equals
F.interpolate bit for bit; the compiler's output is data, the runtime runs it."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

import resize_kernels as rk
from resize_kernels import api, compile_hlo
from resize_kernels.compiler.hlo import HloParseError, parse_hlo_module, print_hlo_module
from resize_kernels.compiler.passes import ValidationError, lower_resize_nearest, validate_resize
from resize_kernels.compiler.pipeline import PASSES, CompiledModule, compile_module, run_passes
from resize_kernels.runtime import LoadedModule, load

from conftest import assert_bits_equal, random_data
from hlo_texts import NUMPY_DTYPES, resize_module

ROOT = Path(__file__).resolve().parents[2]


def torch_interpolate(x: np.ndarray, size) -> np.ndarray:
    """F.interpolate(mode="nearest") on an NCHW numpy array of any of our float dtypes, back as numpy."""
    if x.dtype == NUMPY_DTYPES["bf16"]:
        t = torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
        return torch.nn.functional.interpolate(t, size=size, mode="nearest").view(torch.int16).numpy().view(x.dtype)
    return torch.nn.functional.interpolate(torch.from_numpy(x), size=size, mode="nearest").numpy()


def run_upsample(style, dtype, rng, n=1, c=8, in_hw=(30, 20), out_hw=(59, 38)):
    """Compile the torch_xla-shaped module and run it on random bits; the NCHW input and output."""
    x = random_data(rng, (n, c, *in_hw), NUMPY_DTYPES[dtype])
    out = compile_hlo(resize_module(style, dtype, n, c, in_hw, out_hw))(x)
    assert isinstance(out, tuple) == (style == "old")  # the torch_xla dump's ROOT is a 1-tuple
    return x, out[0] if style == "old" else out


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("style", ["old", "new"])
def test_sd2_upsample_equals_torch_interpolate_bit_for_bit(style, dtype, rng):
    x, y = run_upsample(style, dtype, rng, c=16)
    assert_bits_equal(y, torch_interpolate(x, (59, 38)))


def test_sd2_upsample_at_1280_channels(rng):
    x, y = run_upsample("old", "f32", rng, c=1280)
    assert_bits_equal(y, torch_interpolate(x, (59, 38)))


@pytest.mark.parametrize("n, c, in_hw, out_hw", [(2, 3, (7, 5), (4, 11)), (1, 5, (9, 13), (4, 5)),
                                                 (3, 2, (2, 41), (82, 41))])
def test_other_shapes_up_and_down(n, c, in_hw, out_hw, rng):
    x, y = run_upsample("new", "f32", rng, n, c, in_hw, out_hw)
    assert_bits_equal(y, torch_interpolate(x, out_hw))


def test_the_seed_kernel_can_be_chosen(rng):
    compiled = compile_hlo(resize_module("new"), kernel="seed")
    (program,) = compiled.programs.values()
    assert program.name == "resize_nearest_fixed_dma_kernel"
    x = random_data(rng, (1, 8, 30, 20), np.float32)
    assert_bits_equal(compiled(x), torch_interpolate(x, (59, 38)))


def test_compile_hlo_is_exported_at_the_top():
    assert rk.compile_hlo is api.compile_hlo


def test_compile_hlo_is_compile_module_then_load(rng):
    loaded = compile_hlo(resize_module("new"), kernel="seed")
    assert isinstance(loaded, LoadedModule) and isinstance(loaded.compiled, CompiledModule)
    assert loaded.module is loaded.compiled.module and loaded.programs is loaded.compiled.programs
    assert str(loaded) == str(loaded.compiled) == str(compile_module(resize_module("new"), kernel="seed"))
    x = random_data(rng, (1, 8, 30, 20), np.float32)
    assert_bits_equal(loaded(x), load(compile_module(resize_module("new")))(x))


def test_compile_module_produces_data_only():
    compiled = compile_module(resize_module("new"))
    assert [f.name for f in dataclasses.fields(CompiledModule)] == ["module", "programs"]
    assert not hasattr(compiled, "executor") and not callable(compiled)
    (kernel,) = compiled.programs
    assert kernel.opcode == "InternalNativeNkiKernel" and kernel.kernel_name == "ResizeNearest"


def test_compile_module_takes_a_module_too():
    module = parse_hlo_module(resize_module("new"))
    compiled = compile_module(module)
    assert compiled.module is module and module.entry.instruction("upsample_nearest2d.1").opcode != "custom-call"
    assert str(compiled) == str(compile_module(resize_module("new")))
    assert str(compile_module(resize_module("new").encode())) == str(compiled)  # the text's bytes: the same
    with pytest.raises(TypeError, match="compile_module takes HLO or StableHLO text, HloModuleProto bytes or an "
                                        "HloModule, got int"):
        compile_module(0)


def test_load_takes_only_a_compiled_module():
    with pytest.raises(TypeError, match="load takes a CompiledModule"):
        load(resize_module("new"))


def test_passes_run_in_order():
    assert PASSES.index(validate_resize) < PASSES.index(lower_resize_nearest)  # lowering trusts validation
    seen = []
    module = run_passes(parse_hlo_module(resize_module()), [lambda m: seen.append("a"), lambda m: seen.append("b")])
    assert seen == ["a", "b"] and module.entry.instruction("custom-call.3").opcode == "custom-call"


def test_printing_shows_the_lowered_module_and_each_program_and_parses_back():
    compiled = compile_hlo(resize_module("old"))
    text = str(compiled)
    assert text.startswith(print_hlo_module(compiled.module))
    assert "InternalNativeNkiKernel(transpose.2)" in text
    assert "\n// custom-call.3: kernel ResizeNearest, traced into\n//   program resize_nearest_" in text
    assert "\n//     chosen:    " in text
    assert print_hlo_module(parse_hlo_module(text)) == print_hlo_module(compiled.module)


def test_errors_come_from_the_stage_that_found_them():
    with pytest.raises(HloParseError):
        compile_hlo(resize_module("new")[:-3])
    with pytest.raises(ValidationError, match="align_corners=true"):
        compile_hlo(resize_module("new", backend_config=r'"\"10\""'))
    with pytest.raises(ValueError, match="resize_nearest has no kernel .nope."):
        compile_hlo(resize_module("new"), kernel="nope")


def test_a_loaded_module_runs_again_on_the_same_executor(rng):
    compiled = compile_hlo(resize_module("new"))
    assert isinstance(compiled, LoadedModule)
    x1, x2 = (random_data(rng, (1, 8, 30, 20), np.float32) for _ in range(2))
    y1 = compiled(x1)
    executor = compiled.executor
    y2 = compiled(x2)
    assert compiled.executor is executor
    assert_bits_equal(y1, torch_interpolate(x1, (59, 38)))
    assert_bits_equal(y2, torch_interpolate(x2, (59, 38)))


def test_values_show_each_instruction(rng):
    compiled = compile_hlo(resize_module("new"))
    x = random_data(rng, (1, 8, 30, 20), np.float32)
    values = compiled.values(x)
    assert list(values) == ["x.1", "transpose.2", "upsample_nearest2d.1", "transpose.3"]
    assert_bits_equal(values["upsample_nearest2d.1"], rk.resize_nearest(values["transpose.2"], (38, 59)))


def test_a_compiled_module_prints_one_line_and_a_table_in_notebooks():
    loaded = compile_hlo((ROOT / "examples" / "jax_train_step.pb").read_bytes())
    assert repr(loaded) == ("<LoadedModule jit_train_step: 2 computations, 2 kernels: ffi_call.2 ResizeNearest "
                            f"({len(loaded.programs[loaded.module.entry.instruction('ffi_call.2')].instructions)} "
                            f"instructions), ffi_call.3 ResizeNearestGrad "
                            f"({len(loaded.programs[loaded.module.entry.instruction('ffi_call.3')].instructions)} "
                            "instructions)>")
    assert repr(loaded.compiled).startswith("<CompiledModule jit_train_step: 2 computations, 2 kernels: ")
    html = loaded._repr_html_()
    assert "<b>jit_train_step</b>" in html and html.count("<tr>") == 3  # a header and a row per kernel
