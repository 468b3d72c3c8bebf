"""Fuzzing the command: any argv exits 0, 1 or 2 within 20 s, and never prints a traceback.

Each case runs ``python -m resize_kernels`` in a subprocess, in a scratch directory holding a few files to
point at (binary, empty, an HLO example, a directory). Shapes and sweeps are small, so that the commands
that succeed stay fast; the examples are derandomized, so CI sees the same ones every run.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resize_kernels import cli

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 20

SHAPES = st.sampled_from(["1x30x20x8", "1x59x38x8", "1x8x8x1", "1x4x4x1", "2x3x5x2", "2x7x4x2", "1x6x9x3",
                          "59x38", "garbage", "", "1x3x3", "1x3x3x1x1", "0x3x3x1", "1x-3x3x1", "1X2X2X1",
                          "1x16777216x1x1", "100000x100000x1x1", "1x99999999999999999999x1x1"])
KERNELS = st.sampled_from(["auto", "rows", "seed", "general", "nope"])
COUNTS = st.sampled_from(["0", "1", "2", "-1", "-2", "x", "1.5", "99999999999999999999"])
FILES = st.sampled_from(["sd2.hlo", "binary.pb", "nul.hlo", "empty.hlo", "missing.hlo", "adir", "/dev/null",
                         "/dev/zero", "/proc/x.hlo"])
PLOTS = st.sampled_from(["sweep.png", "sweep.svg", "sweep.txt", "nodir/sweep.png", "/proc/sweep.png", "adir"])


def command(name, required, options):
    """[name, *required, *some of the options]; options maps a flag to a strategy of its value (None: no value)."""
    def chosen(flags):
        parts = [st.just([f]) if options[f] is None else options[f].map(lambda v, f=f: [f, v]) for f in flags]
        return st.tuples(*parts).map(lambda ps: [x for p in ps for x in p])

    picked = st.lists(st.sampled_from(sorted(options)), max_size=3, unique=True).flatmap(chosen)
    return st.tuples(required, picked).map(lambda rp: [name, *rp[0], *rp[1]])


ARGV = st.one_of(
    command("demo", st.just(["--listing", "0"]),
            {"--batch": st.sampled_from(["1", "0", "-2", "x", "3000"]), "--kernel": KERNELS}),
    command("verify", st.tuples(SHAPES, SHAPES).map(lambda io: ["--in", io[0], "--out", io[1]]),
            {"--kernel": KERNELS, "--plot": PLOTS, "--random": COUNTS, "--sweep": st.sampled_from(["2", "0"])}),
    command("verify", st.tuples(st.sampled_from(["1", "3", "8", "0", "-1", "x", "16777216"]),
                                st.sampled_from(["8", "16", "0", "99999999999999999999"]))
            .map(lambda sm: ["--sweep", sm[0], "--max-size", sm[1], "--jobs", "2"]),
            {"--kernel": KERNELS, "--axis": st.sampled_from(["w", "h", "both", "z"]), "--random": COUNTS,
             "--seed": COUNTS, "--plot": PLOTS, "--in": SHAPES}),
    command("compile", FILES.map(lambda f: [f]),
            {"--run": None, "--kernel": KERNELS, "--seed": COUNTS}),
    command("inspect", st.tuples(SHAPES, SHAPES).map(lambda io: ["--in", io[0], "--out", io[1]]),
            {"--kernel": KERNELS, "--target": st.sampled_from(["trn1", "trn2", "trn9"]), "--listing": COUNTS}),
    st.lists(st.sampled_from(["--help", "-h", "--version", "verify", "demo", "compile", "inspect", "bogus", "--in",
                              "1x2x2x1", "--", "-x", "--sweep"]), max_size=4),
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A directory with files for the cases to name."""
    d = tmp_path_factory.mktemp("fuzz")
    shutil.copy(ROOT / "examples" / "sd2_upsample_torch_xla.hlo", d / "sd2.hlo")
    (d / "binary.pb").write_bytes(bytes(range(256)) * 4)
    (d / "nul.hlo").write_bytes(b"HloModule m\x00")
    (d / "empty.hlo").write_bytes(b"")
    (d / "adir").mkdir()
    return d


@settings(max_examples=6, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(argv=ARGV)
def test_any_command_line_exits_0_1_or_2_in_time_without_a_traceback(argv, scratch):
    env = {k: v for k, v in os.environ.items() if k != cli.DEBUG_ENV}
    try:
        done = subprocess.run([sys.executable, "-m", "resize_kernels", *argv], capture_output=True, text=True,
                              errors="replace", cwd=scratch, env=env, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"resize-kernels {argv} ran longer than {TIMEOUT} s")
    assert done.returncode in (0, 1, 2), (argv, done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, (argv, done.stderr[-2000:])
