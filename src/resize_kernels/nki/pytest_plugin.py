"""A pytest plugin that lets a kernel repository's own tests import NKI by its names and run on the simulator.

    PYTHONPATH=src pytest -p resize_kernels.nki.pytest_plugin test/unit/test_resize_nearest.py --simulation-only

Loading it registers ``neuronxcc[.nki[.language|.isa|.typing]]`` and ``nki[...]`` as aliases of
``resize_kernels.nki`` (``install_aliases``), before the tests are collected; a real Neuron installation
is left in place. The run's header says so.
"""

from . import install_aliases

_REGISTERED = install_aliases()


def pytest_report_header(config):
    names = ", ".join(n for n in _REGISTERED if "." not in n) or "none (a real installation was found)"
    return f"resize_kernels.nki: NKI simulated on the NeuronCore model; aliases installed for: {names}"
