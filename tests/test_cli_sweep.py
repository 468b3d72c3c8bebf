"""verify --sweep as a user runs it: Ctrl-C returns the prompt at once, and a resumed sweep says so."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from resize_kernels import cli, semantics, verifier


def children(pid: int) -> list[str]:
    """The pids of ``pid``'s child processes (Linux)."""
    return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()


def _as_from_a_terminal() -> None:
    """Ctrl-C's default action, as a terminal's foreground command has it: a suite started in the background
    (``nohup ... &``, as CI may be) has SIGINT ignored, and its children would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(not Path("/proc/self/task").exists() or (os.cpu_count() or 1) < 2,
                    reason="needs Linux's /proc and two cores (one job runs the sweep in process)")
@pytest.mark.parametrize("more", [[], ["--convention", "all"]])  # the sweep's pool, and the command's
def test_ctrl_c_on_a_sweep_returns_the_prompt_within_seconds(more):
    """The workers are ended, not left to run the chunks they hold (or, once the pool is gone, every chunk). Ctrl-C
    goes to the terminal's whole process group: the workers leave it to the command."""
    proc = subprocess.Popen([sys.executable, "-m", "resize_kernels", "verify", "--sweep", "512", "--jobs", "2", *more],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_as_from_a_terminal, env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    try:
        deadline = time.monotonic() + 60
        while len(children(proc.pid)) < 2 and time.monotonic() < deadline:  # the pool's workers have started
            time.sleep(0.1)
        assert len(children(proc.pid)) == 2, "the sweep's workers did not start"
        workers = children(proc.pid)
        time.sleep(1)  # at work on their first chunks
        os.killpg(proc.pid, signal.SIGINT)
        t0 = time.monotonic()
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # say where it hung: the command's threads (faulthandler), its workers
            alive = proc.poll() is None
            left = [w for w in workers if Path(f"/proc/{w}").exists()]
            if alive:
                os.kill(proc.pid, signal.SIGABRT)
            for pid in left:
                os.kill(int(pid), signal.SIGKILL)
            out, err = proc.communicate(timeout=30)
            pytest.fail(f"no exit 30 s after Ctrl-C: command alive {alive}, workers left {left}; stderr:\n{err[-4000:]}")
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:  # the workers first: they hold the pipes open too
            for pid in children(proc.pid):
                os.kill(int(pid), signal.SIGKILL)
            proc.kill()
            proc.communicate()
    assert took < 10, f"the prompt came back {took:.1f} s after Ctrl-C"
    assert proc.returncode == 130 and out == "" and err == "resize-kernels verify: interrupted\n", err
    time.sleep(0.5)
    assert not [w for w in workers if Path(f"/proc/{w}").exists()
                and "Z" not in Path(f"/proc/{w}/stat").read_text().split()[2]], "a worker outlived the sweep"


def test_an_interrupted_sweep_ends_its_own_pool_at_once(monkeypatch):
    """Ctrl-C while chunks are running: the pool's workers are terminated, not left to finish their chunks."""
    ended = []
    real = verifier.end_pool
    monkeypatch.setattr(verifier, "end_pool", lambda pool: ended.append(pool) or real(pool))

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    import concurrent.futures

    monkeypatch.setattr(concurrent.futures, "wait", interrupted)  # Ctrl-C while waiting for the first chunks
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        verifier.sweep((200, 203), "w", jobs=2)
    assert len(ended) == 1 and time.monotonic() - t0 < 10


def test_a_resumed_sweep_says_how_much_came_from_the_checkpoint(tmp_path, capsys, monkeypatch):
    path = tmp_path / "w.jsonl"
    args = ["verify", "--sweep", "6", "--axis", "w", "--jobs", "1", "--checkpoint", str(path)]
    assert cli.main(args) == 0
    assert "resumed" not in capsys.readouterr().err  # a new checkpoint: nothing to resume
    lines = path.read_text().splitlines()
    assert len(lines) == 6
    path.write_text("\n".join(lines[:2]) + "\n")
    bars = []
    real = verifier._progress
    monkeypatch.setattr(verifier, "_progress", lambda *a, **k: bars.append((a, k)) or real(*a, **k))
    assert cli.main(args) == 0
    out, err = capsys.readouterr()
    assert f"auto/w resumed: 2 of 6 chunks from {path}\n" in err
    assert out.count("36 (in, out) pairs in 1..6: all exact") == 1
    (total, desc), kwargs = bars[0]
    assert (total, desc, kwargs) == (36, "auto/w", {"initial": 12})  # the bar starts at the pairs resumed


def test_a_resumed_bar_starts_at_the_checkpoints_pairs(tmp_path, monkeypatch):
    from tqdm import tqdm

    path = tmp_path / "h.jsonl"
    verifier.sweep(5, "h", checkpoint=path)
    path.write_text(path.read_text().splitlines()[0] + "\n")
    seen = []
    real_update = tqdm.update
    monkeypatch.setattr(tqdm, "update", lambda self, n=1: seen.append((self.n, self.total)) or real_update(self, n))
    monkeypatch.setattr(verifier, "_progress", lambda total, desc, initial=0: tqdm(total=total, initial=initial,
                                                                                    disable=False, file=sys.stderr))
    verifier.sweep(5, "h", checkpoint=path, progress=True)
    assert seen[0] == (5, 25)  # one chunk of 5 pairs from the file: the bar counts from 5 of 25


def test_every_convention_sweeps_on_one_shared_pool(capsys):
    """--convention all runs one sweep per convention and axis on one local pool: a finished sweep leaves it
    open for the next (CI's sweep lost every chunk after the first convention when it did not)."""
    assert cli.main(["verify", "--sweep", "3", "--convention", "all", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("all exact") == 2 * len(semantics.conventions()), out
