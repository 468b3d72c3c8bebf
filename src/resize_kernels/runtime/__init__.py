"""Runs compiled modules: ordinary HLO ops in numpy, traced kernel Programs on the simulated NeuronCore."""

from .executor import ExecutionError, Executor, random_arguments
from .module import LoadedModule, load

__all__ = ["ExecutionError", "Executor", "LoadedModule", "load", "random_arguments"]
