"""A helper interpreter's loop: ``python -m specdec_ui.runtime.helper FD NICENESS [JOB ...]``.

Started by :mod:`specdec_ui.runtime.processes`. Reads (module, function name, args, keyword args)
from the pipe FD, runs the function and sends back (True, result) or (False, the
exception), until the server closes the pipe.

A helper runs only the jobs it was started for, named ``module:qualname``:

- :data:`PRODUCTION_JOBS`, always: the preset Monte Carlo of the labs
  (``specdec_ui.losslessness.work:simulate_and_test``), the speed measurement
  (``specdec_core.lm.timing:measure_pair``) and the cost profile the guard that steps aside
  starts from (``specdec_core.lm.costs:measure_costs``);
- and the ``JOB`` names on its command line. Only a pool object that was built with extra
  jobs passes any (``runtime.processes._Pool(spec, extra_jobs=...)``); the server's pools are built
  from ``runtime.processes.POOLS`` alone and pass none, so a test's own functions
  (``tests/ui/helper_jobs.py``) run only in the helpers a test starts for itself.

An exact list and not a prefix such as ``specdec_`` or ``tests.``: a prefix let a server
helper import and run any function of the test suite, or any function of this project
(one that writes a file, say); the list names the three that need a process of their own.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection

PRODUCTION_JOBS = frozenset(
    {
        "specdec_ui.losslessness.work:simulate_and_test",
        "specdec_core.lm.timing:measure_pair",
        "specdec_core.lm.costs:measure_costs",
    }
)


def job_name(fn: Callable) -> str:
    """``module:qualname`` of a module-level function: how a job is named and allowed."""
    return f"{fn.__module__}:{fn.__qualname__}"


def _function(module: str, qualname: str, allowed: Iterable[str] = PRODUCTION_JOBS):
    name = f"{module}:{qualname}"
    if name not in allowed:
        raise PermissionError(f"a helper runs only the jobs it was started for, not {name}")
    target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def serve(conn: Connection, allowed: frozenset[str] = PRODUCTION_JOBS) -> None:
    """Answer calls until the pipe closes (also while an answer is being sent)."""
    while True:
        try:
            module, qualname, args, kwargs = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply = (True, _function(module, qualname, allowed)(*args, **kwargs))
        except Exception as err:  # noqa: BLE001 - every error goes back to the caller
            reply = (False, err)
        try:
            conn.send(reply)
        except OSError:  # the server went away (or killed the call): nobody to answer
            return


def main(argv: list[str]) -> None:
    fd, niceness, extra_jobs = int(argv[0]), int(argv[1]), argv[2:]
    from specdec_core.lm.blas import limit_blas_threads

    with contextlib.suppress(OSError):
        limit_blas_threads(1)
    if niceness:
        with contextlib.suppress(OSError):
            os.nice(niceness)
    serve(Connection(fd), PRODUCTION_JOBS | frozenset(extra_jobs))


if __name__ == "__main__":
    main(sys.argv[1:])
