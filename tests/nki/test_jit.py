"""``@nki.jit``: the way to write your own kernel, trace it into a Program and simulate it on numpy arrays."""

import numpy as np

from resize_kernels import nki
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl


@nki.jit
def add_one_rows(x):
    """(P, F) float32 in HBM -> x + 1, row block by row block through SBUF."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.hbm, name="out")
    rows = 4
    for r in nl.sequential_range(0, x.shape[0], rows):
        tile = nl.ndarray((rows, x.shape[1]), dtype=x.dtype, name="tile")
        nisa.dma_copy(dst=tile, src=x[r:r + rows, :])
        nisa.tensor_scalar(tile, tile, op0=nl.add, operand0=1.0)
        nisa.dma_copy(dst=out[r:r + rows, :], src=tile)
    return out


@nki.jit
def twice(x):
    """A kernel calling a kernel: the inner one is inlined into the same Program."""
    return add_one_rows(add_one_rows(x))


def test_a_jit_kernel_runs_on_numpy_arrays():
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    np.testing.assert_array_equal(add_one_rows(x), x + 1)


def test_a_jit_kernel_traces_into_a_program():
    program = add_one_rows.trace(nki.TensorSpec((8, 3), np.dtype(np.float32)))
    assert program.name == "add_one_rows" and program.counts() == {"dma_copy": 4, "tensor_scalar": 2}
    assert [t.name for t in program.outputs] == ["out"]
    assert "tensor_scalar" in program.listing()


def test_kernels_calling_kernels_are_inlined():
    x = np.ones((4, 2), np.float32)
    np.testing.assert_array_equal(twice(x), x + 2)
    assert len(twice.trace(x).instructions) == 2 * len(add_one_rows.trace(x).instructions)


def test_the_listing_names_the_source_line_that_issued_each_instruction():
    import inspect

    program = add_one_rows.trace(nki.TensorSpec((8, 3), np.dtype(np.float32)))
    lines, first = inspect.getsourcelines(add_one_rows.func)
    where = {n: first + k for k, text in enumerate(lines) for n in ("dma_copy(dst=tile", "tensor_scalar", "dma_copy(dst=out")
             if n in text}
    assert [i.source[1] for i in program.instructions[:3]] == [where["dma_copy(dst=tile"], where["tensor_scalar"],
                                                              where["dma_copy(dst=out"]]
    assert all(i.source[0] == __file__ for i in program.instructions)
    assert f"  # test_jit.py:{where['tensor_scalar']}" in program.listing().splitlines()[4]


def test_the_docs_nki_example_runs_as_written(tmp_path):
    import pathlib
    import subprocess
    import sys

    page = (pathlib.Path(__file__).parents[2] / "docs" / "nki.md").read_text()
    section = page
    code = section.split("```python", 1)[1].split("```", 1)[0]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "[10. 11. 12.]]" in done.stdout and "# <string>:" in done.stdout and "modelled" in done.stdout


def test_a_kernel_may_return_a_reshaped_view_of_its_output():
    @nki.jit
    def flat_then_shaped(x):
        out = nl.ndarray((x.shape[0] * x.shape[1], x.shape[2]), dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x.reshape((x.shape[0] * x.shape[1], x.shape[2]))[0:6, 0:4])
        nl.store(out[0:6, 0:4], value=t)
        return out.reshape(x.shape)

    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(flat_then_shaped(x), x)


def test_an_unrolled_kernel_of_thousands_of_lines_names_each_line(tmp_path):
    """An exported file's kernel is one line per instruction: its lines come from the code's line table (the frame's
    own line number scans that table from the start each time, which made tracing quadratic in the lines)."""
    calls = 3000
    body = "".join(f"    nisa.memset(tile[0:1, {k % 8}:{k % 8 + 1}], {float(k)})\n" for k in range(calls))
    path = tmp_path / "unrolled.py"
    path.write_text("from resize_kernels.nki import isa as nisa\nfrom resize_kernels.nki import language as nl\n\n\n"
                    "def kernel(x):\n    tile = nl.ndarray((1, 8), dtype=nl.float32, name='t')\n" + body +
                    "    out = nl.ndarray((1, 8), dtype=nl.float32, buffer=nl.shared_hbm, name='out')\n"
                    "    nisa.dma_copy(dst=out, src=tile)\n    return out\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    assert len(namespace["kernel"].__code__.co_code) > (1 << 14)  # long enough for the line table's bisection
    program = nki.trace(namespace["kernel"], np.zeros((1, 8), np.float32))
    assert [i.source for i in program.instructions] == [(str(path), 7 + k) for k in range(calls)] + [(str(path),
                                                                                                      7 + calls + 1)]
