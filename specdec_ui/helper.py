"""A helper interpreter's loop: ``python -m specdec_ui.helper FD NICENESS``.

Started by :mod:`specdec_ui.processes`. Reads (module, function name, args, keyword
args) from the pipe FD, runs the function and sends back (True, result) or (False, the exception),
until the server closes the pipe. Only functions of this project's modules run
(``specdec_*``, and ``tests.`` for the test suite).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from multiprocessing.connection import Connection

ALLOWED_PREFIXES = ("specdec_core", "specdec_ui", "tests.")


def _function(module: str, qualname: str):
    if not module.startswith(ALLOWED_PREFIXES):
        raise PermissionError(f"a helper runs this project's functions only, not {module}")
    target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def serve(conn: Connection) -> None:
    """Answer calls until the pipe closes."""
    while True:
        try:
            module, qualname, args, kwargs = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply = (True, _function(module, qualname)(*args, **kwargs))
        except Exception as err:  # noqa: BLE001 - every error goes back to the caller
            reply = (False, err)
        conn.send(reply)


def main(argv: list[str]) -> None:
    fd, niceness = int(argv[0]), int(argv[1])
    from specdec_core.lm.blas import limit_blas_threads

    with contextlib.suppress(OSError):
        limit_blas_threads(1)
    if niceness:
        with contextlib.suppress(OSError):
            os.nice(niceness)
    serve(Connection(fd))


if __name__ == "__main__":
    main(sys.argv[1:])
