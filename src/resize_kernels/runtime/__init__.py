"""Runs compiled modules: ordinary HLO ops in numpy, traced kernel Programs on the simulated NeuronCore."""

from .executor import ExecutionError, Executor, random_arguments

__all__ = ["ExecutionError", "Executor", "random_arguments"]
