import subprocess
import sys
from pathlib import Path

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
