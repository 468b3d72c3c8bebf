"""Timing shared by the benchmark scripts: the median of repeated runs, set-up excluded."""

import statistics
import time


def median_time(fn, repeat, setup=None):
    """Median seconds of ``fn()`` (or ``fn(setup())``, setup not timed) over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        args = () if setup is None else (setup(),)
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
