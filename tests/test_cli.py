import subprocess
import sys
import time
from pathlib import Path

import pytest

import resize_kernels
from resize_kernels import cli

ROOT = Path(__file__).resolve().parents[1]


def test_demo_runs_and_checks_bits(capsys):
    assert cli.main(["demo", "--batch", "1", "--listing", "5"]) == 0
    out = capsys.readouterr().out
    assert "program resize_nearest_fixed_dma_kernel" in out and "36 (18 indirect: gathers or scatters)" in out
    assert "bit-identical to the reference (semantics.resize_nearest_reference): yes" in out
    assert "bit-identical to torch.nn.functional.interpolate(mode='nearest'): yes" in out


def test_help_lists_commands():
    out = subprocess.run([sys.executable, "-m", "resize_kernels.cli", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "demo" in out


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    blocks = readme.split("```")
    commands = [line.strip() for line in blocks[1].splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2, commands
    assert commands[1] in ci, f"{commands[1]!r} not in .ci/run"


# -- start-up: the parser is built and --help answered without numpy -------------------------------------

# Imports resize_kernels.cli without running the package's __init__ (which imports the API, numpy and ml_dtypes),
# answers the command line in argv and says on stderr whether numpy was imported and how long it took.
CLI_ALONE = """
import importlib.util, sys, time, types
t0 = time.perf_counter()
pkg = types.ModuleType("resize_kernels")
pkg.__path__ = list(importlib.util.find_spec("resize_kernels").submodule_search_locations)
pkg.__version__ = "0.0.test"
sys.modules["resize_kernels"] = pkg
from resize_kernels import cli
try:
    code = cli.main(sys.argv[1:])
except SystemExit as e:
    code = e.code
print(f"numpy={'numpy' in sys.modules} seconds={time.perf_counter() - t0:.3f} code={code}", file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["--help"], ["verify", "--help"], ["--version"], ["verify", "--sweep", "0"],
                                  ["demo", "--batch", "-1"], ["inspect", "--in", "1x2x3x4"], []])
def test_the_parser_imports_no_numpy(argv):
    done = subprocess.run([sys.executable, "-c", CLI_ALONE, *argv], capture_output=True, text=True, timeout=60)
    report = done.stderr.strip().splitlines()[-1]
    assert "numpy=False" in report, report
    assert float(report.split("seconds=")[1].split()[0]) < 1.0, report


def test_python_m_resize_kernels_and_version():
    done = subprocess.run([sys.executable, "-m", "resize_kernels", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "verify" in done.stdout and "RESIZE_KERNELS_DEBUG" in done.stdout
    done = subprocess.run([sys.executable, "-m", "resize_kernels", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout == f"resize-kernels {resize_kernels.__version__}\n"


def test_help_is_fast_when_the_package_import_is_light():
    """`--help` under 1 s, end to end; needs a package __init__ that imports no numpy (skipped until it does)."""
    probe = subprocess.run([sys.executable, "-c", "import sys, resize_kernels; print('numpy' in sys.modules)"],
                           capture_output=True, text=True, timeout=60)
    if probe.stdout.strip() == "True":
        pytest.skip("resize_kernels/__init__.py imports numpy (through api), about 0.6 s before any command")
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "resize_kernels", "--help"], capture_output=True, timeout=60)
    assert done.returncode == 0 and time.perf_counter() - t0 < 1.0


def test_the_parser_choices_are_the_registries():
    from resize_kernels.kernels import FORWARD_KERNELS
    from resize_kernels.machine.cost import TARGETS

    assert cli.KERNELS == tuple(sorted(FORWARD_KERNELS)) and cli.TARGETS == tuple(sorted(TARGETS))
