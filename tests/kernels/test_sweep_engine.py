"""How a sweep runs: chunks, ranges, any concurrent.futures executor, lost workers retried, one JSON report."""

import json
import logging
import os
import signal
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from resize_kernels import cli, verifier
from resize_kernels.verifier import RETRIES, SweepError, SweepResult, check_chunk, sweep, sweep_chunks

from test_sweep import predicted_seed_failures


def seed_failures(axis, low, n):
    return [(i, o, w) for i, o, w in predicted_seed_failures(axis, n) if i >= low and o >= low]


def test_chunks_cover_every_pair_once():
    for low, n, pairs in [(1, 1, 256), (1, 45, 7), (30, 45, 256), (5, 9, 1)]:
        chunks = sweep_chunks("auto", "w", low, n, pairs)
        covered = [(i, o) for c in chunks for i in range(c.ins[0], c.ins[1] + 1)
                   for o in range(c.outs[0], c.outs[1] + 1)]
        assert sorted(covered) == [(i, o) for i in range(low, n + 1) for o in range(low, n + 1)]
        assert all(c.pairs <= pairs for c in chunks)


def test_a_range_sweeps_only_its_pairs_and_finds_what_the_whole_sweep_finds_there():
    result = sweep((38, 45), "w", "seed", jobs=2, chunk_pairs=3)
    assert result.checked == 64 and (result.low, result.n) == (38, 45)
    assert result.failures == seed_failures("w", 38, 45) != []
    assert "64 (in, out) pairs in 38..45" in result.summary()


@pytest.mark.parametrize("bad", [0, (5, 4), (0, 3), 2 ** 24, "12", (1.0, 4), range(3, 3)])
def test_bad_sizes_are_refused(bad):
    with pytest.raises(ValueError, match="sweep requires sizes"):
        sweep(bad)


def test_the_report_round_trips_through_json_with_the_first_wrong_pixel_of_each_pair():
    result = sweep((40, 45), "w", "seed", jobs=1)
    assert result.first_wrong and set(result.first_wrong) <= {(i, o) for i, o, _ in result.failures}
    again = SweepResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again == result


def test_any_executor_runs_the_chunks():
    with ThreadPoolExecutor(3) as pool:
        result = sweep((35, 45), "w", "seed", executor=pool, chunk_pairs=4)
    assert result.failures == seed_failures("w", 35, 45)


class Flaky(ThreadPoolExecutor):
    """An executor that loses the first `lost` chunks it is given, as a cluster loses a worker."""

    def __init__(self, lost):
        super().__init__(2)
        self.lost, self.submitted = lost, 0

    def submit(self, fn, *args):
        self.submitted += 1
        if self.submitted <= self.lost:
            future = Future()
            future.set_exception(ConnectionError("worker lost"))
            return future
        return super().submit(fn, *args)


@pytest.mark.parametrize("executor", [42, object(), "pool"])
def test_an_executor_that_is_none_is_refused(executor):
    with pytest.raises(TypeError, match=f"sweep requires executor to be a concurrent.futures.Executor .*got "
                                        f"{type(executor).__name__}"):
        sweep(4, "w", executor=executor)


def test_an_executor_that_takes_no_work_names_the_chunks_lost():
    pool = ThreadPoolExecutor(2)
    pool.shutdown()  # as a closed Dask client or a broken process pool: submit raises
    with pytest.raises(SweepError, match=r"sweep lost 8 chunks \(w: in 1..1, out 1..8, w: in 2..2, out 1..8, w: in "
                                         r"3..3, out 1..8, ... 5 more\): the executor refused work: RuntimeError: "
                                         r".*rerun with a working executor"):
        sweep(8, "w", executor=pool, chunk_pairs=16)


def test_a_broken_process_pool_is_retried_only_while_it_takes_work(tmp_path):
    """A worker of the caller's pool dies: its chunk is lost, the broken pool takes no more, and the error says
    which chunks were not done (a pool of the sweep's own is replaced instead: the killed-worker test below)."""
    from concurrent.futures import ProcessPoolExecutor

    marker = tmp_path / "killed"
    with ProcessPoolExecutor(2, mp_context=verifier._fork()) as pool:
        pool.submit(_kill_once, str(marker)).exception()  # the pool is broken from here on
        with pytest.raises(SweepError, match="sweep lost .* chunks .* the executor refused work: BrokenProcessPool"):
            sweep(6, "w", executor=pool, chunk_pairs=9)


def _kill_once(marker):
    os.kill(os.getpid(), signal.SIGKILL)


class Stuck(ThreadPoolExecutor):
    """An executor whose futures never complete."""

    def submit(self, fn, *args, **kwargs):
        return Future()


def test_futures_that_never_complete_end_in_a_clear_error_after_the_timeout():
    with Stuck(1) as pool, pytest.raises(SweepError, match=r"failed 4 times; the last time: no result within 0.05 s"):
        sweep(3, "w", executor=pool, chunk_timeout=0.05)
    with pytest.raises(ValueError, match="sweep requires chunk_timeout in seconds, a number > 0, got 0"):
        sweep(3, "w", chunk_timeout=0)


def test_a_lost_chunk_is_tried_again_and_the_result_is_whole():
    with Flaky(lost=5) as pool:
        result = sweep((38, 45), "w", "seed", executor=pool, chunk_pairs=4)
    assert result.failures == seed_failures("w", 38, 45) and pool.submitted == 16 + 5


def test_a_chunk_that_keeps_failing_ends_the_sweep_with_a_clear_error():
    with Flaky(lost=10 ** 6) as pool, pytest.raises(SweepError, match=f"failed {RETRIES + 1} times; .*worker lost"):
        sweep((1, 3), "w", executor=pool)


MARKER = {}


def check_chunk_or_die(chunk):
    """The worker's function, except that the first worker to take the second chunk dies (SIGKILL) on it."""
    marker = MARKER["path"]
    if chunk.ins == (31, 31) and not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return check_chunk(chunk)


def test_a_killed_local_worker_loses_only_its_chunk(tmp_path, monkeypatch):
    """A worker of the local pool killed mid-sweep: the pool is replaced and the unfinished chunks run again."""
    from resize_kernels import verifier

    MARKER["path"] = str(tmp_path / "killed")
    monkeypatch.setattr(verifier, "check_chunk", check_chunk_or_die)  # the forked workers inherit it
    result = sweep((30, 45), "w", "seed", jobs=2, chunk_pairs=16)
    assert os.path.exists(MARKER["path"]) and result.failures == seed_failures("w", 30, 45)


def test_a_dask_cluster_with_a_worker_killed_mid_sweep():
    import distributed  # in the test extra: a missing install fails here, it is not skipped

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        done = threading.Event()
        result = []
        thread = threading.Thread(target=lambda: (result.append(sweep((30, 60), "w", "seed", chunk_pairs=2,
                                                                      executor=client.get_executor())), done.set()))
        thread.start()
        busy = []
        while not busy and not done.is_set():  # a worker with a chunk in hand
            busy = [address for address, keys in client.processing().items() if keys]
            time.sleep(0.01)
        assert busy and not done.is_set(), "the sweep ended before a worker could be killed: make it longer"
        os.kill(pids[busy[0]], signal.SIGKILL)
        thread.join(timeout=300)
        assert done.is_set() and result[0].failures == seed_failures("w", 30, 60)


def test_the_command_takes_a_range_and_writes_json(tmp_path, capsys):
    path = tmp_path / "sweep.json"
    assert cli.main(["verify", "--sweep", "40..45", "--axis", "w", "--kernel", "seed", "--jobs", "2",
                     "--json", str(path)]) == 1
    out = capsys.readouterr().out
    assert "36 (in, out) pairs in 40..45" in out and f"wrote {path}" in out
    report = json.loads(path.read_text())
    assert [SweepResult.from_dict(d).failures for d in report["sweeps"]] == [seed_failures("w", 40, 45)]


@pytest.mark.parametrize("argv, message", [
    (["--sweep", "9..3"], "expected N or LOW..HIGH"),
    (["--sweep", "a..3"], "expected N or LOW..HIGH"),
    (["--in", "1x2x2x1", "--out", "1x3x3x1", "--json", "x.json"], "go with --sweep"),
])
def test_bad_sweep_arguments_are_usage_errors(argv, message, capsys):
    try:
        code = cli.main(["verify", *argv])
    except SystemExit as e:
        code = e.code
    assert code == 2 and message in capsys.readouterr().err


def test_json_to_a_missing_directory_fails_before_the_sweep(tmp_path, capsys):
    assert cli.main(["verify", "--sweep", "3", "--json", str(tmp_path / "no" / "r.json")]) == 1
    assert "existing directory" in capsys.readouterr().err


def test_check_chunk_is_what_a_worker_runs():
    (chunk,) = sweep_chunks("seed", "w", 41, 41)
    assert check_chunk(chunk).failures == seed_failures("w", 41, 41)


def test_an_unreachable_dask_scheduler_is_one_clear_error(monkeypatch, capsys):
    import functools

    monkeypatch.setattr(cli, "_dask_client", functools.partial(cli._dask_client, timeout="1s"))
    assert cli.main(["verify", "--sweep", "3", "--dask", "tcp://127.0.0.1:1"]) == 1
    assert "--dask could not reach a Dask scheduler at 'tcp://127.0.0.1:1'" in capsys.readouterr().err


def test_the_command_runs_a_sweep_on_a_dask_cluster(capsys):
    import distributed

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster:
        assert cli.main(["verify", "--sweep", "40..42", "--axis", "w", "--kernel", "seed",
                         "--dask", cluster.scheduler_address]) == 1
    wrong = len(seed_failures("w", 40, 42))
    assert f"9 (in, out) pairs in 40..42: {wrong} not exact" in capsys.readouterr().out and wrong > 0


# -- checkpoints: a long sweep resumes where it stopped ------------------------------------------------

def test_a_checkpointed_sweep_resumes_with_only_the_missing_chunks(tmp_path, monkeypatch):
    path = tmp_path / "sweep.jsonl"
    full = verifier.sweep((38, 44), "w", "seed", chunk_pairs=3, checkpoint=path)
    assert full.failures  # out width 41
    lines = path.read_text().splitlines()
    assert len(lines) == len(verifier.sweep_chunks("seed", "w", 38, 44, 3)) == 21
    path.write_text("\n".join(lines[:5]) + "\n" + lines[5][:40])  # killed while writing the sixth line
    checked = []
    real = verifier.check_chunk
    monkeypatch.setattr(verifier, "check_chunk", lambda c: checked.append(c) or real(c))
    again = verifier.sweep((38, 44), "w", "seed", chunk_pairs=3, checkpoint=path)
    assert len(checked) == 16  # the five complete lines are not checked again
    assert (again.failures, again.not_applicable, again.first_wrong) == (full.failures, full.not_applicable,
                                                                           full.first_wrong)
    assert again.worker_seconds > 0 and len(path.read_text().splitlines()) == 5 + 1 + 16  # the cut line stays
    assert len(verifier.Checkpoint(path).load()) == 21


def test_a_finished_checkpoint_gives_the_result_without_checking(tmp_path, monkeypatch):
    path = tmp_path / "sweep.jsonl"
    full = verifier.sweep(5, "h", checkpoint=path)
    monkeypatch.setattr(verifier, "check_chunk", None)  # would fail if called
    again = verifier.sweep(5, "h", checkpoint=path, jobs=2)
    assert again.checked == full.checked == 25 and not again.failures and again.worker_seconds == full.worker_seconds


def test_a_checkpoint_of_other_code_does_not_count(tmp_path, monkeypatch):
    path = tmp_path / "sweep.jsonl"
    verifier.sweep(4, "w", checkpoint=path)
    assert len(verifier.Checkpoint(path).load()) == 4  # a chunk per in size
    monkeypatch.setattr(verifier, "code_fingerprint", lambda: "a kernel changed")
    record = verifier.Checkpoint(path)
    assert record.load() == {} and record.stale == 4
    checked = []
    real = verifier.check_chunk
    monkeypatch.setattr(verifier, "check_chunk", lambda c: checked.append(c) or real(c))
    assert verifier.sweep(4, "w", checkpoint=path).checked == 16 and len(checked) == 4


def test_a_wide_sweep_takes_larger_chunks():
    assert verifier.CHUNK_PAIRS == 256  # a 1..512 sweep: 1,024 chunks of 256 pairs per axis
    chunks = verifier.sweep_chunks("auto", "w", 1, 4096, max(verifier.CHUNK_PAIRS, 4096 ** 2 // verifier.MAX_CHUNKS))
    assert len(chunks) == 4096 and {c.pairs for c in chunks} == {4096}


def test_checkpoint_path_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="a sweep checkpoint requires a regular file in an existing directory"):
        verifier.sweep(3, "w", checkpoint=tmp_path / "no" / "such.jsonl")
    with pytest.raises(ValueError, match="a sweep checkpoint requires a regular file in an existing directory"):
        verifier.sweep(3, "w", checkpoint=tmp_path)
    for device in ("/dev/zero", "/dev/full", "/dev/null"):  # endless or not a file: refused, not read
        with pytest.raises(ValueError, match="requires a regular file"):
            verifier.sweep(3, "w", checkpoint=device)
    with pytest.raises(TypeError, match="a sweep checkpoint requires a file path, got int"):
        verifier.sweep(3, "w", checkpoint=0)


def test_a_checkpoint_past_its_size_is_refused_not_read(tmp_path, monkeypatch):
    path = tmp_path / "big.jsonl"
    path.write_text("x" * 101)
    monkeypatch.setattr(verifier, "MAX_CHECKPOINT_BYTES", 100)
    with pytest.raises(ValueError, match="requires a file of at most 0 MiB, got .*big.jsonl', which is larger"):
        verifier.sweep(3, "w", checkpoint=path)


def test_cli_sweep_with_a_checkpoint_resumes(tmp_path, capsys):
    path = tmp_path / "w.jsonl"
    args = ["verify", "--sweep", "6", "--axis", "w", "--jobs", "1", "--checkpoint", str(path)]
    assert cli.main(args) == 0 and cli.main(args) == 0
    out = capsys.readouterr().out
    assert out.count("36 (in, out) pairs in 1..6: all exact") == 2
    assert len(path.read_text().splitlines()) == len(sweep_chunks("auto", "w", 1, 6))
