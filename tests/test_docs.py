"""The manual runs as written: the README and every page under docs/, each code block on its own.

Each ``python`` block runs alone in a fresh interpreter (a reader pastes one block, not the page), and each
shell (``sh``) block's commands run one by one, each with the exit code its comment promises. A block that
cannot run here says why in the comment line just above it: ``<!-- not run here: REASON -->``.

Substituted, so that the suite stays short (each keeps the command's meaning on fewer shapes): sweeps over
1..128 or more run over 1..6, and the Dask line runs on local processes (tests/kernels/test_sweep_engine.py runs
--dask against a LocalCluster). ``.ci/run`` builds the site with ``mkdocs build --strict``.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: A fence, with the comment line before it (if any), its language and its body.
FENCE = re.compile(r"(?:^<!-- (?P<note>[^\n]*?) -->\n)?^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```\s*$",
                   re.MULTILINE | re.DOTALL)
SHORTER = [(r"--sweep 128 --random 20", "--sweep 6 --random 3"), (r"--sweep 1000\.\.1100", "--sweep 1000..1002"),
           (r"--sweep 4096 --axis w --dask tcp://\S+", "--sweep 6 --axis w --jobs 2"),
           (r"--sweep (4096|512|320|256|128)", "--sweep 6")]
#: Languages that are code (the others are listings and output, not run).
RUN = ("python", "sh")


def blocks():
    """(page, language, body, why-not-run or None) of every fenced block of the manual."""
    for page in PAGES:
        for m in FENCE.finditer(page.read_text()):
            note = m["note"] or ""
            skip = note[len("not run here:"):].strip() if note.startswith("not run here:") else None
            yield page.relative_to(ROOT), m["lang"], m["body"], skip


def _id(page, n):
    return f"{page}#{n}"


PYTHON = [(page, body) for page, lang, body, skip in blocks() if lang == "python" and skip is None]
SHELL = []
for _page, _lang, _body, _skip in blocks():
    if _lang != "sh" or _skip is not None:
        continue
    for _line in _body.splitlines():
        _command, _, _comment = _line.partition("  #")
        if not _command.strip() or _command.lstrip().startswith("#"):
            continue
        for _pattern, _shorter in SHORTER:
            _command = re.sub(_pattern, _shorter, _command)
        SHELL.append((_page, _command.strip(), 1 if "exits 1" in _comment else 0))


def test_the_manual_has_what_this_test_runs():
    langs = {lang for _, lang, _, _ in blocks()}
    assert len(PYTHON) >= 10 and len(SHELL) >= 30, (len(PYTHON), len(SHELL))
    assert langs <= {"python", "sh", "text", ""}, f"blocks in languages this test does not know: {langs}"
    unlabelled = [str(page) for page, lang, _, skip in blocks() if lang == "" and skip is None]
    assert not unlabelled, f"blocks with no language (python, sh or text): {unlabelled}"
    assert ("resize-kernels compile examples/jax_train_step.mlir --run", 0) in [(c, e) for _, c, e in SHELL]


def test_every_skipped_block_says_why():
    for page, lang, _, skip in blocks():
        assert skip is None or len(skip) > 10, f"{page}: a block not run here must say why"


@pytest.mark.parametrize("page, code", PYTHON, ids=[_id(p, n) for n, (p, _) in enumerate(PYTHON)])
def test_each_python_block_runs_alone(page, code, tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("page, command, code", SHELL, ids=[f"{p}: {c}" for p, c, _ in SHELL])
def test_each_shell_command_runs_as_written(page, command, code, tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(shlex.split(command), capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert done.returncode == code, (done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr


def test_the_readme_is_a_front_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    linked = set(re.findall(r"\(docs/([\w-]+\.md)\)", readme))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert linked == pages - {"index.md"}, f"README links {sorted(linked)}, docs has {sorted(pages)}"


def test_every_page_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    missing = [p.name for p in (ROOT / "docs").glob("*.md") if p.name not in nav]
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"


def test_every_document_the_code_cites_ships_with_it():
    """A newcomer can open every .md file the sources, tests, examples and benchmarks name (design documents
    outside the repository are not cited: the facts are stated where they are used)."""
    cited = set()
    for folder in ("src", "tests", "examples", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            cited |= {(path, m) for m in re.findall(r"[\w./-]+\.md\b", path.read_text())}
    for page in PAGES:
        cited |= {(page, m) for m in re.findall(r"\]\(([\w./-]+\.md)\)", page.read_text())}
    missing = [f"{path.relative_to(ROOT)} cites {name}" for path, name in cited
               if not any((base / name).is_file() for base in (ROOT, ROOT / "docs", path.parent))]
    assert len(cited) >= 3 and not missing, missing
