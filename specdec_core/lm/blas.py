"""Run numpy's BLAS on one thread (best effort, without extra packages).

The matrices of these models are tiny (at most 9 x 768): a second BLAS thread only adds
synchronisation, and on a busy or shared machine (Community Cloud, CI) it made a step up
to four times slower here. Setting ``OPENBLAS_NUM_THREADS=1`` before numpy is imported
does the same, but a Streamlit page cannot control import order, so
:func:`limit_blas_threads` calls OpenBLAS's own setter in the library numpy bundles
(the approach of threadpoolctl). It does nothing when that library is not found.
:func:`blas_kernel` names the kernels OpenBLAS picked for this processor (they decide
what a verify of K + 1 rows costs against one row; ``OPENBLAS_CORETYPE`` overrides them).
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os

import numpy as np

_CORENAMES = (
    "scipy_openblas_get_corename64_",
    "scipy_openblas_get_corename",
    "openblas_get_corename64_",
    "openblas_get_corename",
)
_SETTERS = (
    "scipy_openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)


@functools.lru_cache(maxsize=2)
def _function(names: tuple[str, ...]):
    """The first of ``names`` exported by the OpenBLAS that numpy bundles (None if none)."""
    libs_dir = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs_dir, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in names:
            if hasattr(lib, name):
                return getattr(lib, name)
    return None


def _setter():
    return _function(_SETTERS)


def limit_blas_threads(n: int = 1) -> bool:
    """Ask numpy's OpenBLAS to use ``n`` threads; True if the call was made."""
    setter = _setter()
    if setter is None:
        return False
    setter(ctypes.c_int(n))
    return True


def blas_kernel() -> str:
    """The BLAS in use and its kernel set, e.g. "openblas SkylakeX" ("unknown" if unseen).

    Asks threadpoolctl when it is installed (its ``architecture`` field), else OpenBLAS's
    own ``get_corename`` in the library numpy bundles, the function threadpoolctl reads.
    """
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        getter = _function(_CORENAMES)
        if getter is None:
            return "unknown"
        getter.restype = ctypes.c_char_p
        return f"openblas {getter().decode('ascii', 'replace')}"
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if not blas:
        return "unknown"
    return f"{blas[0].get('internal_api', 'blas')} {blas[0].get('architecture', '?')}"
