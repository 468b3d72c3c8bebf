"""The command never prints a traceback: exit 0 success, 1 an error in one message, 2 a usage error."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from resize_kernels import cli
from resize_kernels.errors import ResourceError

ROOT = Path(__file__).resolve().parents[1]
SD2_HLO = str(ROOT / "examples" / "sd2_upsample_torch_xla.hlo")


def run(argv, capsys):
    """(exit code, stdout, stderr) of ``resize-kernels argv``, run in this process."""
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.mark.parametrize("argv, message", [
    (["verify", "--sweep", "0"], "argument --sweep: expected N or LOW..HIGH with 1 <= LOW <= HIGH, got '0'"),
    (["verify", "--sweep", "4", "--random", "-2"], "argument --random: expected a non-negative integer, got '-2'"),
    (["verify", "--sweep", "4", "--max-size", "0"], "argument --max-size: expected a positive integer, got '0'"),
    (["verify", "--sweep", "4", "--seed", "-1"], "argument --seed: expected a non-negative integer, got '-1'"),
    (["verify", "--sweep", "4", "--jobs", "0"], "argument --jobs: expected a positive integer, got '0'"),
    (["demo", "--batch", "0"], "argument --batch: expected a positive integer, got '0'"),
    (["demo", "--listing", "x"], "argument --listing: expected a non-negative integer, got 'x'"),
    (["compile", SD2_HLO, "--run", "--seed", "-1"], "argument --seed: expected a non-negative integer, got '-1'"),
    (["inspect", "--in", "1x2x2x1", "--out", "1x4x4x1", "--listing", "-1"], "expected a non-negative integer"),
])
def test_bad_numbers_are_usage_errors(argv, message, capsys):
    code, _, err = run(argv, capsys)
    assert code == 2 and message in err


@pytest.mark.parametrize("argv, message", [
    (["verify", "--in", "1x3x3x1", "--out", "1x4x4x1", "--sweep", "3"], "give --in and --out, or --sweep N, not both"),
    (["verify", "--in", "1x3x3x1", "--out", "1x4x4x1", "--plot", "x.png"], "--random, --plot, --json, --dask and --checkpoint go with --sweep"),
])
def test_options_that_do_not_go_together_are_usage_errors(argv, message, capsys):
    assert run(argv, capsys)[::2] == (2, f"resize-kernels verify: {message}\n")


@pytest.mark.parametrize("argv, message", [
    (["verify", "--in", "1x30x20x8", "--out", "2x59x41x8"], "verify requires equal batch and channels"),
    (["verify", "--in", "1x16777216x1x1", "--out", "1x1x1x1"], "verify requires every size below 2**24"),
    (["verify", "--in", "100000x100000x1x1", "--out", "100000x1x1x1"], "fewer than 2**31 elements"),
    (["verify", "--sweep", "16777216"], "sweep requires sizes n (meaning 1..n) or (low, high) with 1 <= low <= high < 16777216"),
    (["verify", "--sweep", "2", "--random", "1", "--max-size", "16777216"], "max_size requires an integer in"),
    (["demo", "--kernel", "strided"], "resize_nearest_strided_kernel requires an integer ratio on each axis"),
    (["demo", "--batch", "3000"], "fewer than 2**31 elements"),
    (["inspect", "--in", "1x3x3x1", "--out", "2x3x3x1"], "equal batch and channels"),
])
def test_errors_are_one_message_and_exit_1(argv, message, capsys):
    code, _, err = run(argv, capsys)
    assert code == 1 and err.startswith(f"resize-kernels {argv[0]}: ") and message in err
    assert err.count("\n") == 1


def test_a_resource_error_is_reported(monkeypatch, capsys):
    """demo --batch 200 is beyond a small host: the budget's ResourceError, in one line, before any allocation."""
    from resize_kernels.machine import memory

    def refuse(nbytes, what):
        raise ResourceError(f"{what} needs about {nbytes >> 20} MiB of host memory")

    monkeypatch.setattr(memory, "check_host_memory", refuse)
    code, _, err = run(["demo", "--batch", "200", "--kernel", "auto", "--listing", "0"], capsys)
    assert code == 1 and err.startswith("resize-kernels demo: the demo's input and reference arrays needs about ")


@pytest.mark.parametrize("error, line", [
    (ZeroDivisionError("division by zero"), "resize-kernels inspect: unexpected ZeroDivisionError: division by zero "
                                            "(a bug: please report it; RESIZE_KERNELS_DEBUG=1 shows the traceback)\n"),
    (MemoryError(), "resize-kernels inspect: out of host memory (MemoryError); use a smaller shape or batch\n"),
])
def test_an_unexpected_exception_is_one_line_and_debug_shows_it(error, line, monkeypatch, capsys):
    import resize_kernels.api

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(resize_kernels.api, "cost", broken)
    argv = ["inspect", "--in", "1x3x3x1", "--out", "1x4x4x1"]
    assert run(argv, capsys) == (1, "", line)
    monkeypatch.setenv("RESIZE_KERNELS_DEBUG", "1")
    with pytest.raises(type(error)):
        cli.main(argv)


def test_ctrl_c_exits_130_without_a_traceback(monkeypatch, capsys):
    import resize_kernels.verifier

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(resize_kernels.verifier, "sweep", interrupted)
    assert run(["verify", "--sweep", "3"], capsys) == (130, "", "resize-kernels verify: interrupted\n")


# -- verify: kernels that do not take a shape, and the sweep's default ---------------------------------

def test_verify_a_kernel_that_does_not_take_the_shape(capsys):
    code, out, err = run(["verify", "--in", "1x30x20x8", "--out", "1x59x41x8", "--kernel", "strided"], capsys)
    assert code == 1 and err == ""
    assert out.startswith("kernel 'strided': NHWC 1x30x20x8 -> 1x59x41x8: not applicable: "
                          "resize_nearest_strided_kernel requires an integer ratio on each axis")


def test_sweep_counts_pairs_a_kernel_does_not_take_apart(capsys):
    code, out, _ = run(["verify", "--sweep", "8", "--kernel", "strided", "--jobs", "1", "--random", "4",
                        "--max-size", "6"], capsys)
    assert code == 0
    assert "kernel 'strided', axis w: 64 (in, out) pairs in 1..8: 32 exact, 32 not applicable" in out
    assert "kernel 'strided', axis h: 64 (in, out) pairs in 1..8: 32 exact, 32 not applicable" in out
    assert "  not applicable, e.g. 2 -> 3: resize_nearest_strided_kernel requires an integer ratio" in out
    assert "kernel 'strided': 4 random 2-D shapes up to 6: " in out


def test_sweep_without_kernel_sweeps_the_default_only(capsys):
    code, out, _ = run(["verify", "--sweep", "5", "--jobs", "1"], capsys)
    assert code == 0 and out.count("kernel ") == 2 and out.count("kernel 'auto', axis ") == 2


# -- --plot is checked before the sweep starts ----------------------------------------------------------

@pytest.mark.parametrize("name, message", [
    ("nodir/sweep.png", "a plot requires an existing directory, got '{tmp}/nodir' for '{tmp}/nodir/sweep.png'"),
    ("sweep.txt", "a plot requires a file name ending in .png, .pdf, .svg, got '{tmp}/sweep.txt'"),
    ("/proc/sweep.png", "a plot requires a writable file, got '/proc/sweep.png': "),
    ("adir.png", "a plot requires a writable file, got '{tmp}/adir.png': Is a directory"),
])
def test_a_plot_path_that_cannot_be_written_fails_before_the_sweep(name, message, tmp_path, monkeypatch, capsys):
    import resize_kernels.verifier

    (tmp_path / "adir.png").mkdir()
    monkeypatch.setattr(resize_kernels.verifier, "sweep", lambda *a, **k: pytest.fail("the sweep started"))
    code, _, err = run(["verify", "--sweep", "500", "--plot", str(tmp_path / name)], capsys)
    assert code == 1 and err.startswith("resize-kernels verify: " + message.format(tmp=tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir.png"]


def test_a_missing_matplotlib_fails_before_the_sweep(tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    code, _, err = run(["verify", "--sweep", "500", "--plot", str(tmp_path / "s.png")], capsys)
    assert (code, err) == (1, "resize-kernels verify: a plot requires matplotlib: pip install 'resize-kernels[plot]'\n")


def test_the_plot_names_the_path_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(["verify", "--sweep", "4", "--jobs", "1", "--axis", "w", "--plot", "sweep.SVG"], capsys)
    assert code == 0 and out.endswith(f"wrote {tmp_path / 'sweep.SVG'}\n")
    assert (tmp_path / "sweep.SVG").read_text().lstrip().startswith("<?xml")


# -- compile: files that are not HLO text, and readers that go away ------------------------------------

@pytest.mark.parametrize("data, got, hint", [
    (b"\xff\xfe\x00\x01", "4 bytes that protobuf cannot decode: an invalid field tag (field 2031, wire type 7) at byte 0",
     "the file is damaged, or holds another kind of message: write the file again from its producer"),
    ("HloModule m\n// é".encode() + b"\xe9 x", "20 bytes that protobuf cannot decode: an invalid field tag (field 13, "
     "wire type 7) at byte 2", "the file reads as text up to byte 0xe9 at offset 17: if it is HLO or StableHLO text, "
     "fix that byte (text must be UTF-8 without control characters)"),
    (b"HloModule m\x00\n", "13 bytes that protobuf cannot decode: an invalid field tag (field 13, wire type 7) at "
     "byte 2", "the file reads as text up to byte 0x00 at offset 11"),
])
def test_compile_reports_a_file_that_is_not_utf8_text(data, got, hint, tmp_path, capsys):
    """Bytes that are not text are read as a serialized HloModuleProto: the proto reader says where they break."""
    path = tmp_path / "model.pb"
    path.write_bytes(data)
    code, out, err = run(["compile", str(path)], capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"HloModuleProto requires a well-formed serialized message, got {got}; {hint}")
    assert err.count("\n") == 1


def test_compile_a_directory_or_a_device(tmp_path, capsys):
    code, _, err = run(["compile", str(tmp_path)], capsys)
    assert code == 1 and "Is a directory" in err
    code, _, err = run(["compile", "/dev/zero"], capsys)
    assert code == 1 and err == "compile requires a module file of at most 256 MiB, got '/dev/zero', which is larger\n"


@pytest.mark.parametrize("argv", [["inspect", "--in", "1x30x20x8", "--out", "1x59x41x8", "--listing", "100000"],
                                  ["compile", SD2_HLO], ["--help"]])
def test_a_reader_that_goes_away_ends_the_command_quietly(argv):
    """`resize-kernels ... | head -1`: no BrokenPipeError traceback, nothing on stderr."""
    for _ in range(2):
        proc = subprocess.Popen([sys.executable, "-m", "resize_kernels", *argv], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) in (0, 1) and err == "", err


@pytest.mark.parametrize("argv", ["--version", "--help", "inspect --in 1x4x4x1 --out 8x8"])
def test_a_closed_standard_output_is_one_line_not_a_traceback(argv):
    done = subprocess.run(["sh", "-c", f"{sys.executable} -m resize_kernels {argv} >&-"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr == ("resize-kernels: standard output is closed; run it with an output (a file, a pipe, "
                           "/dev/null)\n")


@pytest.mark.parametrize("flag, path, message", [
    ("--timeline", "t.out", "--timeline requires a file name ending in .png, .pdf, .svg, got 't.out'"),
    ("--timeline", "/dev/full", "--timeline requires a file name ending in .png"),
    ("--timeline", "no/such/dir/t.png", "--timeline requires an existing directory"),
    ("--trace", "no/such/dir/t.json", r"--trace \(a Chrome trace\) requires an existing directory"),
    ("--trace", ".", r"--trace \(a Chrome trace\) requires a file name, got the directory"),
])
def test_inspect_checks_its_output_files_before_the_work(flag, path, message, capsys, monkeypatch):
    from resize_kernels import api

    monkeypatch.setattr(api, "cost", lambda *a, **k: pytest.fail("the work began before the path was checked"))
    code, out, err = run(["inspect", "--in", "1x4x4x1", "--out", "8x8", flag, path], capsys)
    assert code == 1 and out == "" and re.search(message, err) and err.count("\n") == 1


@pytest.mark.parametrize("flag", ["--convention", "--nearest-mode", "--coordinate-transformation-mode",
                                  "--tensorflow-mode"])
def test_an_empty_convention_name_is_an_error_not_the_default(flag, capsys):
    code, out, err = run(["verify", "--in", "1x4x4x1", "--out", "8x8", flag, ""], capsys)
    assert code == 1 and out == "" and "got ''" in err and err.count("\n") == 1
