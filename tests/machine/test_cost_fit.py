"""cost_fit.json is benchmarks/fit_cost.py's output, and the fitted model reproduces the figures it was fitted to.

The steps that need no clone (DMA bandwidth, descriptor and packet costs, trn2's launch) are refitted here; the
adaptive-pool steps need an nki-samples clone: ``python benchmarks/fit_cost.py --nki-samples CLONE --check``.
"""

import json

import pytest

from resize_kernels.machine import cost

from conftest import benchmark_module



@pytest.fixture(scope="module")
def fit_cost():
    with benchmark_module("fit_cost") as module:
        yield module


def test_the_file_is_the_fits_output(fit_cost):
    stored = json.loads(cost.FIT_FILE.read_text())
    assert stored["written_by"] == "benchmarks/fit_cost.py"
    entries, _ = fit_cost.fit_without_clone()
    for target, fitted in entries.items():
        for name, entry in fitted.items():
            assert stored["parameters"][target][name] == entry, (target, name)


def test_every_fitted_figure_names_its_inputs_and_reaches_the_model():
    for target, fitted in json.loads(cost.FIT_FILE.read_text())["parameters"].items():
        params = cost.target_params(target)
        for name, entry in fitted.items():
            assert len(entry["fitted_to"]) > 20, (target, name)
            assert getattr(params, name) == entry["value"], (target, name)


def test_the_fitted_model_reproduces_the_dma_figures(fit_cost):
    trn1, trn2 = cost.target_params("trn1"), cost.target_params("trn2")
    whole = fit_cost.curve_time_per_byte(32768, trn2)
    for per_partition, fraction in fit_cost.CURVE:  # the bandwidth guide's curve, within 5%
        assert fit_cost.curve_time_per_byte(per_partition, trn2) / whole == pytest.approx(1 / fraction, rel=0.05)
    peak_bytes, peak_us = fit_cost.TRN1_KERNEL
    assert peak_bytes / (trn1.peak_dma_gbps * 1e3) <= peak_us  # trn1's peak allows the public 294 GB/s kernel
    floor = fit_cost.floor_program()
    assert cost.program_cost(floor, "trn2").modelled_us == pytest.approx(fit_cost.FLOOR_US, abs=1e-3)
