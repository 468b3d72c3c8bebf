"""Run an aws-neuron/nki-samples checkout's own unit tests on the simulator, unmodified.

    git clone https://github.com/aws-neuron/nki-samples && git -C nki-samples checkout b3c5c8d
    python examples/run_nki_samples.py nki-samples                    # the vision tests, numeric only
    python examples/run_nki_samples.py nki-samples --perf             # also the perf tests (modelled latency)
    python examples/run_nki_samples.py nki-samples test/unit/test_resize_nearest.py

The tests import ``neuronxcc.nki``; the pytest plugin ``resize_kernels.nki.pytest_plugin`` makes those
names this project's simulator. ``--simulation-only`` (the repository's own option) keeps the tests
marked ``simulation``; with ``--perf`` every test runs, the perf tests comparing the cost model's
modelled latency with the repository's hardware bounds.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

VISION_TESTS = ["test/unit/test_resize_nearest.py", "test/unit/test_select_and_scatter.py",
                "test/unit/test_adaptive_avg_pool2d.py"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path, help="an nki-samples checkout (its src/ and test/unit/)")
    parser.add_argument("tests", nargs="*", help="test files relative to the checkout (default: the vision tests "
                                                 "that exist in it)")
    parser.add_argument("--perf", action="store_true", help="run every test, not only the simulation ones")
    args = parser.parse_args()
    root = args.checkout.resolve()
    if not (root / "src").is_dir():
        parser.error(f"expected an nki-samples checkout with a src/ directory, got {str(root)!r}")
    tests = args.tests or [t for t in VISION_TESTS if (root / t).exists()]
    if not tests:
        parser.error(f"no vision tests in {str(root)!r}; name the test files to run")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root / "src"), os.environ.get("PYTHONPATH")])))
    command = [sys.executable, "-m", "pytest", "-p", "resize_kernels.nki.pytest_plugin", "-p", "no:cacheprovider",
               "-q", *tests] + ([] if args.perf else ["--simulation-only"])
    print("$", " ".join(command[2:]), flush=True)
    return subprocess.run(command, cwd=root, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
