"""install_aliases: NKI code imports this package under NKI's own names and runs unmodified.

The kernel below is written as NKI code is (our own, exercising the API surface of the public resize sample:
``import neuronxcc.nki.language as nl``, an int32 iota, ``/``, ``*``, ``+``, ``-`` and ``<`` on tiles,
``nl.floor(..., dtype=)``, ``reshape(shape=...)``, masked advanced-index loads and stores); the project's tests
copy no code of the samples.
"""

import importlib.util
import subprocess
import sys
import types

import ml_dtypes
import numpy as np
import pytest

import resize_kernels.nki as rnki
from resize_kernels import semantics
from resize_kernels.machine.simulator import Executable

from conftest import assert_bits_equal, random_data

NAMES = ["neuronxcc", "neuronxcc.nki", "neuronxcc.nki.language", "neuronxcc.nki.isa", "neuronxcc.nki.typing",
         "neuronxcc.nki.compiler", "nki", "nki.language", "nki.isa", "nki.typing"]


@pytest.fixture
def clean_modules():
    """Restore sys.modules afterwards, exactly: aliases must not leak into other tests."""
    saved = dict(sys.modules)
    for name in ("neuronxcc", "nki"):
        spec = importlib.util.find_spec(name) if name not in sys.modules else sys.modules[name].__spec__
        if spec is not None and spec.origin is not None:  # (tests/nki, a bare directory, does not count)
            pytest.skip(f"a real NKI installation ({name}) is importable here")
    try:
        yield
    finally:
        for name in set(sys.modules) - set(saved):
            del sys.modules[name]
        sys.modules.update(saved)


def test_nothing_is_installed_at_import_time():
    code = "import sys, resize_kernels.nki; print([n for n in ('neuronxcc', 'nki') if n in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_install_registers_every_name_once(clean_modules):
    assert rnki.install_aliases() == NAMES
    assert rnki.install_aliases() == []  # already importable now: left alone
    import neuronxcc.nki as nki_pkg
    import neuronxcc.nki.isa as nisa
    import neuronxcc.nki.language as nl
    import neuronxcc.nki.typing as nt
    from neuronxcc import nki as classic
    import nki as top
    import nki.language
    assert nki_pkg is classic is rnki.classic and top is nki is rnki  # the classic namespace: the classic dialect
    assert nl is rnki.classic.language and nisa is rnki.classic.isa and nt is rnki.typing
    assert top.language is rnki.language and sys.modules["nki.isa"] is rnki.isa
    assert nl.par_dim(128) == 128 and nt.tensor is rnki.typing.tensor


def test_a_bare_directory_named_nki_is_no_installation(clean_modules, tmp_path, monkeypatch):
    (tmp_path / "nki").mkdir()  # a namespace package, as tests/nki is when tests/ is on the path
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "nki" in rnki.install_aliases() and sys.modules["nki"] is rnki


def test_existing_names_are_skipped_unless_replace(clean_modules):
    real = types.ModuleType("nki")
    sys.modules["nki"] = real
    registered = rnki.install_aliases()
    assert "nki" not in registered and sys.modules["nki"] is real
    assert "neuronxcc.nki.language" in registered
    assert rnki.install_aliases(replace=True) == NAMES
    assert sys.modules["nki"] is rnki


def nki_style_program(in_shape, out_hw, dtype):
    import neuronxcc.nki.isa as nisa
    import neuronxcc.nki.language as nl

    def nearest_by_flat_position(image, out_shape):
        n, h, w, c = image.shape
        _, oh, ow, _ = out_shape
        result = nl.ndarray(out_shape, dtype=image.dtype, buffer=nl.shared_hbm)
        pixels = image.reshape(shape=(n, h * w, c))
        flat_out = result.reshape(shape=(n, oh * ow, c))
        lanes, chans = nl.arange(128)[:, None], nl.arange(c)[None, :]
        for t in nl.affine_range((oh * ow + 127) // 128):
            where = t * 128 + lanes
            flat = nisa.iota(where, dtype=nl.int32)
            row = nl.floor(flat / ow, dtype=nl.int32)  # int / int: a float32 quotient, then the floor
            col = flat - row * ow
            source = nl.floor(row * (h / oh), dtype=nl.int32) * w + nl.floor(col * (w / ow), dtype=nl.int32)
            inside = where < oh * ow
            for b in nl.affine_range(n):  # the index tile serves every batch
                block = nl.load(pixels[b, source, chans], mask=inside)
                nl.store(flat_out[b, where, chans], value=block, mask=inside)
        return result

    out_shape = (in_shape[0], *out_hw, in_shape[3])
    return rnki.trace(nearest_by_flat_position, rnki.TensorSpec(in_shape, np.dtype(dtype)), out_shape=out_shape)


@pytest.mark.parametrize("in_shape, out_hw", [((1, 30, 20, 8), (59, 38)), ((2, 3, 1, 2), (5, 41)),
                                              ((1, 7, 5, 3), (4, 9))])
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.int8])
def test_nki_code_runs_through_the_aliases(clean_modules, in_shape, out_hw, dtype, rng):
    rnki.install_aliases()
    program = nki_style_program(in_shape, out_hw, dtype)
    x = random_data(rng, in_shape, dtype)
    (y,) = Executable(program).run([x])
    assert_bits_equal(y, semantics.resize_nearest_reference(x, out_hw))
