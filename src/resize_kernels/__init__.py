"""resize-kernels: the Neuron compiler's nearest-neighbour resize path, on a simulated NeuronCore."""

from .api import compile_hlo, cost, index_map, resize_nearest, resize_nearest_grad, trace_resize, trace_resize_grad
from .verifier import verify

__version__ = "0.1.0"
__all__ = ["resize_nearest", "resize_nearest_grad", "index_map", "trace_resize", "trace_resize_grad", "verify",
           "compile_hlo", "cost"]
