"""verify_grad and gradient sweeps: the gradient kernel's dx checked bit for bit against the reference, and a
kernel that misroutes one contribution is caught."""

import json

import numpy as np
import pytest

from resize_kernels import cli
from resize_kernels.kernels import KernelRecord, grad as grad_module, registration
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl
from resize_kernels.verifier import GRAD, SweepResult, sweep, verify_grad


@pytest.mark.parametrize("in_shape, out_shape", [
    ((2, 30, 20, 3), (2, 59, 41, 3)), ((1, 7, 5, 2), (1, 3, 2, 2)), ((1, 1, 1, 1), (1, 9, 4, 1)),
])
def test_default_gradient_kernel_is_exact(in_shape, out_shape):
    report = verify_grad(in_shape, out_shape)
    assert report.ok and report.wrong_pixels == 0
    pixels = np.prod(in_shape[:3])
    assert f"exact ({pixels:,} input-gradient pixel{'s' if pixels != 1 else ''} checked)" in str(report)


def broken_grad_kernel(dy_tensor, in_shape):
    """The real gradient, then dx row 0 overwritten by row 1: wrong wherever the two rows differ."""
    dx = grad_module.resize_nearest_grad_kernel(dy_tensor, in_shape)
    b, h, w, c = in_shape
    if h >= 2:
        flat = dx.reshape((b * h * w, c))
        row = nl.ndarray((w, c), dtype=dx.dtype, name="row")
        nisa.dma_copy(dst=row, src=flat.ap(pattern=[[c, w], [1, c]], offset=w * c))
        nisa.dma_copy(dst=flat.ap(pattern=[[c, w], [1, c]], offset=0), src=row)
    return dx


@pytest.fixture
def broken(monkeypatch):
    monkeypatch.setitem(registration._RECORDS, (GRAD, "broken"),
                        KernelRecord("broken", GRAD, broken_grad_kernel, rank=None))
    return "broken"


def test_a_misrouted_gradient_is_caught_with_its_pixels(broken):
    report = verify_grad((1, 3, 4, 2), (1, 5, 6, 2), kernel=broken)
    assert not report.ok and report.wrong_pixels == 4  # row 0's four pixels
    (pixel, want, got), *_ = report.first_wrong
    assert pixel == (0, 0, 0) and want != got
    assert "NOT exact: 4 of 12 input-gradient pixels wrong" in str(report)
    assert f"dx (n=0, h=0, w=0) channel 0: expected {want}, got {got}" in str(report)


def test_gradient_sweep_reports_the_broken_pairs(broken):
    result = sweep(6, "h", broken, op=GRAD)
    assert result.op == GRAD and result.checked == 36
    assert {(i, o) for i, o, _ in result.failures} == {(i, o) for i in range(2, 7) for o in range(1, 7)}
    assert result.summary().startswith("gradient kernel 'broken', axis h: 36 (in, out) pairs in 1..6:")
    again = SweepResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again == result


def test_gradient_sweep_of_the_default_kernel_is_exact():
    for axis in "wh":
        result = sweep(24, axis, op=GRAD)
        assert result.kernel == "auto" and not result.failures and not result.not_applicable


def test_cli_sweeps_the_gradient(capsys):
    assert cli.main(["verify", "--sweep", "5", "--grad", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "gradient kernel 'auto', axis w: 25 (in, out) pairs in 1..5: all exact" in out
    assert cli.main(["verify", "--in", "1x3x4x2", "--out", "1x5x6x2", "--grad"]) == 0
    assert "input-gradient pixels checked" in capsys.readouterr().out
    assert cli.main(["verify", "--sweep", "5", "--grad", "--kernel", "rowreuse"]) == 2  # a usage error
    assert "--kernel 'rowreuse' is no gradient kernel; choose one of auto, rows, padded, general" in capsys.readouterr().err


def test_sweep_rejects_an_unknown_op():
    with pytest.raises(ValueError, match="sweep requires op 'resize_nearest' or 'resize_nearest_grad', got 'x'"):
        sweep(3, "w", op="x")
