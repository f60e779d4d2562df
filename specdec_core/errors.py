"""Errors and hard limits shared by the whole engine.

Every input check raises a subclass of :class:`SpecDecError`, which is a
``ValueError`` (the convention of ``numpy.random.Generator.choice``), with a
message that names the entry, what is wrong and what is allowed, so that a
page can show ``str(err)`` to a student as it is.

The limits live here, in the core, so that a crafted link or a scripted
caller meets the same caps as the widgets.
"""

from __future__ import annotations

MAX_TEXT_LENGTH = 2_000  # characters in one typed vector, label list or coin list
MAX_TYPED_ENTRIES = 64  # entries of a typed toy vector
MAX_LABEL_LENGTH = 24  # characters of one vocabulary label
MAX_VOCAB = 65_536  # entries of a distribution passed as an array
MAX_K = 16  # draft tokens in one round (the pages offer 1..8)
MAX_K_THEORY = 256  # largest K for the closed-form speedup functions
MAX_METRIC_POSITIONS = 32  # draft positions in one engine log of acceptance rates or counts
MAX_ROUNDS = 2_000_000  # Monte Carlo rounds in one simulate_rounds call
MAX_SIM_CELLS = 64_000_000  # n_rounds * V in one simulation (memory guard)
SUM_TOLERANCE = 1e-6  # |sum - 1| allowed for a distribution


class SpecDecError(ValueError):
    """Base class of every input error raised by :mod:`specdec_core`."""


class InvalidDistributionError(SpecDecError):
    """A probability vector is malformed (not numbers, negative, wrong sum...)."""


class InvalidParameterError(SpecDecError):
    """A scalar or structural argument (K, alpha, a cost, a token id...) is out of range."""


def mismatch_message(n_p: int, n_q: int, p_name: str = "p", q_name: str = "q") -> str:
    """The one message for two vectors of different sizes.

    ``"p has 1 entry but q has 5; they must match."``: p and q are distributions
    over the same vocabulary (seed 000), so their sizes must agree entry for entry.
    """
    entries = "entry" if n_p == 1 else "entries"
    return f"{p_name} has {n_p} {entries} but {q_name} has {n_q}; they must match."
