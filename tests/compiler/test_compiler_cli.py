"""``resize-kernels compile``: print the lowered module, run it and check every ResizeNearest, fail clearly."""

import re

from resize_kernels import cli

from hlo_texts import ROOT, custom_call_module, resize_module

SD2 = str(ROOT / "examples" / "sd2_upsample_torch_xla.hlo")


def test_compile_prints_the_lowered_module_and_its_program(capsys):
    assert cli.main(["compile", SD2]) == 0
    out = capsys.readouterr().out
    assert "custom-call.3 = f32[1,38,59,1280]{3,2,1,0} InternalNativeNkiKernel(transpose.2), " \
           'kernel_name="ResizeNearest"' in out
    assert "// custom-call.3: kernel ResizeNearest, traced into\n//   program resize_nearest_" in out
    assert re.search(r"//     chosen:    \w+ \(.*\), the fastest of \d+ on trn1 and trn2 \(modelled\)", out)
    assert "bit-identical" not in out


def test_compile_run_checks_every_resize_against_the_reference(capsys):
    assert cli.main(["compile", SD2, "--run"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("ran on seeded random inputs (seed 0)\n"
                        "custom-call.3: ResizeNearest float32 [1, 20, 30, 1280] -> [1, 38, 59, 1280], "
                        "bit-identical to the reference (semantics.resize_nearest_reference): yes\n")


def test_compile_kernel_picks_the_forward_variant(capsys):
    assert cli.main(["compile", str(ROOT / "examples" / "jax_upsample_pool.hlo"), "--run", "--kernel", "seed"]) == 0
    out = capsys.readouterr().out
    assert "program resize_nearest_fixed_dma_kernel" in out and out.count(": yes\n") == 1


def test_a_validation_error_prints_its_message_and_exits_1(tmp_path, capsys):
    path = tmp_path / "align.hlo"
    path.write_text(resize_module("old", backend_config=r'"\"10\""'))
    assert cli.main(["compile", str(path), "--run"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("ResizeNearest: align_corners=true is not supported in this implementation.\n"
                            "Set align_corners=false in your ResizeNearest configuration.\n")


def test_a_parse_error_prints_its_message_and_exits_1(tmp_path, capsys):
    path = tmp_path / "cut.hlo"
    path.write_text(resize_module("new")[:-3])
    assert cli.main(["compile", str(path)]) == 1
    assert capsys.readouterr().err.startswith("HLO parse error at line ")


def test_a_missing_file_exits_1(tmp_path, capsys):
    assert cli.main(["compile", str(tmp_path / "none.hlo")]) == 1
    assert "No such file or directory" in capsys.readouterr().err


def test_a_module_the_executor_cannot_run_exits_1(tmp_path, capsys):
    path = tmp_path / "other.hlo"
    path.write_text(custom_call_module(attributes='custom_call_target="MyKernel"'))
    assert cli.main(["compile", str(path)]) == 0
    assert cli.main(["compile", str(path), "--run"]) == 1
    assert "was not lowered by the compiler" in capsys.readouterr().err
