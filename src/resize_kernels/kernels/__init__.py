"""Kernel functions and their registration records. They know nothing of HLO.

Each kernel file is a schedule: it reads the resize's plan (``plan.py``) and builds its index graph and DMAs from
the shared library (``helpers.py``, ``dma.py``, and for the rows kernels ``columns.py`` and ``schedule.py``), and
ends with one ``register(KernelRecord(...))`` (``record.py``). Importing the package imports every module in it,
so a kernel is added by adding its file; every list of kernels is derived from the records. ``baselines/`` holds
the kernels the others are measured against: the seed's, the public sample's and the plain exact one.
"""

import importlib
import pkgutil

from .registration import AUTO, FORWARD, GRAD, KernelRecord, candidates, convention_names, fallback, names, record, records

for _module in pkgutil.walk_packages(__path__, __name__ + "."):
    importlib.import_module(_module.name)

__all__ = ["AUTO", "FORWARD", "GRAD", "KernelRecord", "candidates", "convention_names", "fallback", "names", "record",
           "records"]
