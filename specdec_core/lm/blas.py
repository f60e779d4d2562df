"""Run numpy's BLAS on one thread (best effort, without extra packages).

The matrices of these models are tiny (at most 9 x 768): a second BLAS thread only adds
synchronisation, and on a busy or shared machine (Community Cloud, CI) it made a step up
to four times slower here. Setting ``OPENBLAS_NUM_THREADS=1`` before numpy is imported
does the same, but a Streamlit page cannot control import order, so
:func:`limit_blas_threads` calls OpenBLAS's own setter in the library numpy bundles
(the approach of threadpoolctl). It does nothing when that library is not found.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os

import numpy as np

_SETTERS = (
    "scipy_openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)


@functools.lru_cache(maxsize=1)
def _setter():
    libs_dir = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs_dir, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            if hasattr(lib, name):
                return getattr(lib, name)
    return None


def limit_blas_threads(n: int = 1) -> bool:
    """Ask numpy's OpenBLAS to use ``n`` threads; True if the call was made."""
    setter = _setter()
    if setter is None:
        return False
    setter(ctypes.c_int(n))
    return True
