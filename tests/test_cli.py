import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import resize_kernels
import resize_kernels as rk
from resize_kernels import cli

ROOT = Path(__file__).resolve().parents[1]


def row(out: str, label: str) -> list[str]:
    """The demo's two cells (seed's, ours) of the table row ``label``."""
    line = next(line for line in out.splitlines() if line.startswith("  " + label))
    return re.split(r"\s{2,}", line.strip())[1:]


def test_demo_sets_the_seed_beside_ours_and_checks_bits(capsys):
    assert cli.main(["demo", "--batch", "1", "--listing", "5"]) == 0
    out = capsys.readouterr().out
    seed = rk.trace_resize((1, 30, 20, 1280), (59, 38), kernel="seed")
    ours = rk.trace_resize((1, 30, 20, 1280), (59, 38))
    assert row(out, "instructions") == [f"{len(seed.instructions):,}", f"{len(ours.instructions):,}"]
    assert row(out, "DMAs (bytes moved)")[0].startswith(f"{len(seed.dmas())} (")
    assert row(out, "bit-identical to the reference") == ["yes", "yes"]
    assert row(out, "bit-identical to F.interpolate") == ["yes", "yes"]
    assert row(out, "wrong pixels at 30x20 -> 59x41") == ["10 of 2,419", "0 of 2,419"]
    trn2 = rk.cost((1, 30, 20, 1280), (1, 59, 38, 1280), target="trn2")
    assert row(out, "modelled time on trn2")[1] == f"{trn2.modelled_us:,.1f} us ({trn2.efficiency:.0%})"
    picked = ours.selection.kernel
    first = next(line for line in ours.listing().splitlines() if line.startswith("   0  "))
    assert f"ours (auto: {picked})" in out and first.split("#")[0] in out  # the listing of ours, 5 instructions
    assert "Next:" in out and "resize-kernels verify --sweep 64" in out


def test_demo_without_torch_says_how_to_get_the_comparison(capsys, monkeypatch):
    monkeypatch.setattr(cli, "_optional_torch", lambda: None)
    assert cli.main(["demo", "--batch", "1"]) == 0
    out = capsys.readouterr().out
    assert "F.interpolate" not in "".join(line for line in out.splitlines() if line.startswith("  bit-identical"))
    assert "torch is not installed, so nothing was compared with F.interpolate: pip install" in out


def test_help_lists_commands():
    out = subprocess.run([sys.executable, "-m", "resize_kernels.cli", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "demo" in out


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    blocks = readme.split("```")
    commands = [line.strip() for line in blocks[1].splitlines()[1:] if line.strip() and not line.startswith("#")]
    assert len(commands) == 2, commands
    assert commands[1] in ci, f"{commands[1]!r} not in .ci/run"


# -- start-up: the parser is built and --help answered without numpy -------------------------------------

# Answers the command line in argv and says on stderr whether numpy was imported on the way.
CLI_ALONE = """
import sys
import time
from resize_kernels import cli
try:
    code = cli.main(sys.argv[1:])
except SystemExit as e:
    code = e.code
print(f"numpy={'numpy' in sys.modules} code={code}", file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["--help"], ["verify", "--help"], ["--version"], ["verify", "--sweep", "0"],
                                  ["demo", "--batch", "-1"], ["inspect", "--in", "1x2x3x4"], []])
def test_the_parser_imports_no_numpy(argv):
    done = subprocess.run([sys.executable, "-c", CLI_ALONE, *argv], capture_output=True, text=True, timeout=60)
    report = done.stderr.strip().splitlines()[-1]
    assert "numpy=False" in report, report


def test_python_m_resize_kernels_and_version():
    done = subprocess.run([sys.executable, "-m", "resize_kernels", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "verify" in done.stdout and "RESIZE_KERNELS_DEBUG" in done.stdout
    done = subprocess.run([sys.executable, "-m", "resize_kernels", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout == f"resize-kernels {resize_kernels.__version__}\n"


def test_importing_the_package_loads_nothing_heavy():
    """The public names are imported on first use: `import resize_kernels` loads no numpy, ml_dtypes or API."""
    probe = ("import sys, resize_kernels\n"
             "print(sorted(m for m in ('numpy', 'ml_dtypes', 'resize_kernels.api') if m in sys.modules))\n"
             "print(resize_kernels.resize_nearest.__module__, resize_kernels.verifier.__name__)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == ["[]", "resize_kernels.api resize_kernels.verifier"], done.stderr


def test_the_parser_targets_are_the_cost_models():
    from resize_kernels.machine.cost import TARGETS

    assert cli.TARGETS == tuple(sorted(TARGETS))


@pytest.mark.parametrize("argv, op", [(["inspect", "--in", "1x4x4x1", "--out", "8x8"], "resize_nearest"),
                                      (["verify", "--in", "1x4x4x1", "--out", "8x8", "--grad"],
                                       "resize_nearest_grad")])
def test_kernel_names_are_the_registered_kernels(argv, op, capsys):
    """--kernel is checked against the records when the command runs (the parser imports no kernels)."""
    from resize_kernels.kernels import names

    assert cli.main([*argv, "--kernel", "nope"]) == 2
    assert f"choose one of {', '.join(names(op))}" in capsys.readouterr().err
    assert cli.main([*argv, "--kernel", names(op)[1]]) == 0


@pytest.mark.parametrize("argv", [["--help"], ["verify", "--in", "1x2x3"]])
def test_help_and_usage_errors_answer_within_0_3_s(argv):
    """The issue's budget for a newcomer's first command, wall time of a fresh interpreter (the best of three, so
    that a busy machine's one slow start does not decide)."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "resize_kernels", *argv], capture_output=True, timeout=60)
        times.append(time.perf_counter() - t0)
    assert min(times) < 0.3, times
