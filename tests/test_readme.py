"""The README runs as written: its Python blocks in one interpreter, top to bottom (as a newcomer pastes them),
and its shell blocks' commands one by one, each with the exit code its comment promises.

Substituted, so that the suite stays short (each substitution keeps the command's meaning, on fewer shapes):
sweeps over 1..128 or more run over 1..6 (and the random shapes, the range and the gradient on as few), and
the Dask line runs on the local processes instead (tests/kernels/test_sweep_engine.py runs --dask against a
LocalCluster). Not run here: the two set-up commands (``.ci/run`` runs the test one on a clean clone, and the
demo is tests/test_cli.py's), the NKI samples' pytest line (it needs a checkout of aws-neuron/nki-samples:
tests/nki/test_launch.py runs the plugin), the layout block, which is not code, and the ``py`` block of "Run on
Trainium" (it needs a trn2 instance).
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCKS = README.split("```")[1::2]  # the fenced blocks, each starting with its language tag (or a newline)
SHORTER = [(r"--sweep 128 --random 20", "--sweep 6 --random 3"), (r"--sweep 1000\.\.1100", "--sweep 1000..1002"),
           (r"--sweep 4096 --axis w --dask tcp://host:8786", "--sweep 6 --axis w --jobs 2"),
           (r"--sweep (4096|256)", "--sweep 6")]
NOT_HERE = ("pip install", "pytest -p resize_kernels.nki.pytest_plugin", "examples/run_nki_samples.py")


def python_blocks() -> list[str]:
    return [b[len("python\n"):] for b in BLOCKS if b.startswith("python\n")]


def shell_commands() -> list[tuple[str, int]]:
    """(command, expected exit code) of every shell line the README shows, substituted as the docstring says."""
    out = []
    for block in BLOCKS:
        if not block.startswith("\n"):
            continue
        for line in block.splitlines():
            command, _, comment = line.partition("#")
            if not command.strip().startswith(("resize-kernels", "python", "PYTHONPATH")):
                continue
            if any(skip in command for skip in NOT_HERE):
                continue
            for pattern, shorter in SHORTER:
                command = re.sub(pattern, shorter, command)
            out.append((command.strip(), 1 if "exits 1" in comment else 0))
    return out


def test_the_readme_shows_what_this_test_runs():
    assert len(python_blocks()) >= 5 and len(shell_commands()) >= 10
    assert ("resize-kernels compile examples/jax_train_step.mlir --run", 0) in shell_commands()


def test_the_python_blocks_run_in_one_interpreter(tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    code = "\n".join(python_blocks())
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("command, code", shell_commands(), ids=[c for c, _ in shell_commands()])
def test_the_shell_commands_run_as_written(command, code, tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(shlex.split(command), capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert done.returncode == code, (done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr


def test_every_document_the_code_cites_ships_with_it():
    """A newcomer can open every .md file the sources, tests, examples and benchmarks name (design documents
    outside the repository are not cited: the facts are stated where they are used)."""
    cited = set()
    for folder in ("src", "tests", "examples", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            cited |= {(path, m) for m in re.findall(r"[\w./-]+\.md\b", path.read_text())}
    cited |= {(ROOT / "README.md", m) for m in re.findall(r"[\w./-]+\.md\b", README)}
    missing = [f"{path.relative_to(ROOT)} cites {name}" for path, name in cited
               if not (ROOT / name).is_file() and not (path.parent / name).is_file()]
    assert len(cited) >= 3 and not missing, missing
