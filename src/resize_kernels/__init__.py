"""resize-kernels: the Neuron compiler's nearest-neighbour resize path, on a simulated NeuronCore.

The public functions are imported on first use (PEP 562), so that `import
resize_kernels` and the command line's `--help` do not pay for numpy,
ml_dtypes and the compiler before they are needed.
"""

import importlib

__version__ = "0.1.0"
#: Public name -> the module that defines it.
_PUBLIC = {"resize_nearest": "api", "resize_nearest_grad": "api", "index_map": "api", "trace_resize": "api",
           "trace_resize_grad": "api", "compile_hlo": "api", "cost": "api", "verify": "verifier",
           "export_nki": "export"}
_SUBMODULES = ("api", "cli", "compiler", "contract", "errors", "export", "frontends", "kernels", "machine", "nki",
               "runtime", "select", "semantics", "verifier")
__all__ = list(_PUBLIC)


def __getattr__(name: str):
    if name in _PUBLIC:
        value = getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'resize_kernels' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_PUBLIC, *_SUBMODULES])
