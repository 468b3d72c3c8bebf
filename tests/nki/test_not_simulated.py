"""An NKI name the simulator does not provide is a clear error naming it, never a silent stand-in."""

import pickle

import pytest

from resize_kernels.errors import NotSimulatedError
from resize_kernels.nki import isa as nisa
from resize_kernels.nki import language as nl


@pytest.mark.parametrize("module, alias, name", [(nl, "nl", "mgrid_of_dreams"), (nisa, "nisa", "nc_matmul_x")])
def test_a_missing_name_says_it_is_not_simulated(module, alias, name):
    with pytest.raises(NotSimulatedError, match=rf"^{alias}\.{name} is not simulated by resize_kernels.nki"):
        getattr(module, name)
    assert not hasattr(module, name)  # still an AttributeError: hasattr and from-imports behave
    with pytest.raises(ImportError):
        exec(f"from resize_kernels.nki.{module.__name__.rsplit('.', 1)[1]} import {name}")


def test_python_probes_get_a_plain_attribute_error():
    with pytest.raises(AttributeError) as info:
        nl.__wrapped__  # noqa: B018
    assert not isinstance(info.value, NotSimulatedError)
    assert pickle.loads(pickle.dumps(nl.add)).alu_name == "add"  # pickling still finds what it looks up
