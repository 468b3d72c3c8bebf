"""The NeuronCore model: dtypes, memories, access patterns, instructions, simulator.

It knows nothing of resize, HLO or kernels.
"""
