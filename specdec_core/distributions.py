"""Reading and checking probability vectors, labels and coins.

What a person types ("0.4, 0.25, 1/3; 40%") becomes a float64 vector here, or
an :class:`InvalidDistributionError` whose message says which entry is wrong,
what is wrong with it and what is allowed. Nothing is fixed silently: a
vector whose sum is off by more than ``SUM_TOLERANCE`` is refused unless the
caller asks for ``normalize=True``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .errors import (
    MAX_K,
    MAX_LABEL_LENGTH,
    MAX_TEXT_LENGTH,
    MAX_TYPED_ENTRIES,
    MAX_VOCAB,
    SUM_TOLERANCE,
    InvalidDistributionError,
    InvalidParameterError,
    SpecDecError,
    mismatch_message,
)

_SEPARATORS = re.compile(r"[,;\s]+")
# ASCII only: Python's float() also takes "1_000", "٣" and "infinity", which a
# probability field should not.
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?"
_PLAIN = re.compile(rf"^{_NUMBER}$")
_PERCENT = re.compile(rf"^({_NUMBER})%$")
_FRACTION = re.compile(rf"^({_NUMBER})/({_NUMBER})$")
_NOT_FINITE = re.compile(r"^[+-]?(nan|inf|infinity)%?$", re.IGNORECASE)
_ALLOWED = "a decimal (0.25), a fraction (1/4) or a percentage (25%)"


def _short(text: str, width: int = 20) -> str:
    """Quote a piece of typed text for an error message, cut to ``width`` characters."""
    return repr(text if len(text) <= width else text[:width] + "…")


_DECIMAL_COMMA = re.compile(r"^[+-]?[0-9]+,[0-9]+%?$")


def _check_decimal_commas(body: str, name: str, error: type[SpecDecError]) -> None:
    """Refuse a decimal comma ("0,4; 0,25" would read as the entries 0, 4, 0, 25).

    An entry between semicolons or spaces of the form ``0,4`` is a decimal comma when
    the text has other entries too, or when reading the comma as a separator gives a
    number above 1 ("0,4" alone would be 0 and 4); "0,1" alone stays the two entries
    0 and 1. The message names the entry and says what to type.
    """
    pieces = [text for text in re.split(r"[;\s]+", body) if text]
    for i, piece in enumerate(pieces):
        if not _DECIMAL_COMMA.match(piece):
            continue
        unit = "%" if piece.endswith("%") else ""
        parts = piece.rstrip("%").split(",")
        if len(pieces) == 1 and not unit and all(float(x) <= 1 for x in parts):
            return
        point, two = piece.replace(",", "."), f"{parts[0]}{unit}, {parts[1]}{unit}"
        if len(piece) > 20:  # a huge entry is quoted cut short, never echoed whole
            point, two = "it", "them"
        raise error(
            f"{name}: entry {i + 1} ({_short(piece)}) looks like a decimal comma; type "
            f"{point} with a point (a comma separates entries here; for two entries "
            f"type {two} with a space)."
        )


def _split_entries(body: str) -> list[str]:
    """The entries of typed text, separated by commas, semicolons or spaces."""
    return [text for text in _SEPARATORS.split(body) if text]


def _parse_entries(entries: list[str], name: str) -> list[float]:
    """Each typed entry as a number (:func:`parse_number`); errors name the entry, 1-based."""
    return [parse_number(text, entry=i + 1, name=name) for i, text in enumerate(entries)]


def as_float_array(
    x: object, what: str, error: type[SpecDecError] = InvalidDistributionError
) -> np.ndarray:
    """``x`` as a float64 numpy array, or ``error("<what> (numpy's reason).")``.

    The one place that turns numpy's TypeError / ValueError / OverflowError
    (text, ragged lists, an integer too large for a float) into the project's
    error; ``what`` says what was expected, e.g. ``"p: not a table of numbers"``.
    """
    try:
        return np.array(x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as err:
        raise error(f"{what} ({err}).") from None


def _check_text(text: object, what: str) -> str:
    """``text`` stripped, if it is a str of at most MAX_TEXT_LENGTH characters."""
    if not isinstance(text, str):
        raise InvalidParameterError(f"{what} must be text, got {type(text).__name__}.")
    if len(text) > MAX_TEXT_LENGTH:
        raise InvalidParameterError(
            f"{what} is {len(text):,} characters long; at most {MAX_TEXT_LENGTH:,} are allowed."
        )
    return text.strip()


def parse_number(text: str, *, entry: int | None = 1, name: str = "p") -> float:
    """One typed entry -> float: ``0.25``, ``1/4``, ``25%`` (ASCII digits only).

    Raises ``InvalidDistributionError`` naming the entry (1-based) when the
    text is not a number, not finite, or a fraction with a zero denominator;
    ``entry=None`` for a field that holds one number ("answer ('abc') is not ...").
    """
    where = f"{name}: entry {entry} ({_short(text)})" if entry else f"{name} ({_short(text)})"
    if _NOT_FINITE.match(text):
        raise InvalidDistributionError(f"{where} is not a finite number; use {_ALLOWED}.")
    if m := _PERCENT.match(text):
        value = float(m.group(1)) / 100.0
    elif m := _FRACTION.match(text):
        numerator, denominator = float(m.group(1)), float(m.group(2))
        if denominator == 0:
            raise InvalidDistributionError(f"{where} divides by zero; use {_ALLOWED}.")
        value = numerator / denominator
    elif _PLAIN.match(text):
        value = float(text)
    else:
        raise InvalidDistributionError(f"{where} is not a number; use {_ALLOWED}.")
    if not np.isfinite(value):
        raise InvalidDistributionError(f"{where} is too large to be a probability.")
    return value + 0.0  # turns -0.0 into 0.0


def _check_sum(x: np.ndarray, name: str, normalize: bool) -> np.ndarray:
    """x / sum(x) if |sum - 1| <= SUM_TOLERANCE (any positive sum with ``normalize``)."""
    with np.errstate(over="ignore"):
        total = float(x.sum())
    if not np.isfinite(total):
        raise InvalidDistributionError(
            f"{name}: the entries are too large to add up; probabilities are at most 1."
        )
    if total <= 0.0:
        raise InvalidDistributionError(
            f"{name}: all entries are zero; at least one must be positive."
        )
    if abs(total - 1.0) > SUM_TOLERANCE and not normalize:
        raise InvalidDistributionError(
            f"{name}: entries sum to {total:.6g}, not 1 (allowed: 1 ± {SUM_TOLERANCE:g}). "
            "Fix the entries, or turn on normalisation to divide them by their sum."
        )
    # Within tolerance this only removes floating-point rounding (0.1+0.2+0.7).
    return x / total


@dataclass(frozen=True)
class VectorWords:
    """How :func:`finite_vector`'s messages name a vector and its parts (by default a
    probability vector's)."""

    kind: str = "an array of numbers"
    shape: str = "a 1-D vector"
    item: str = "entry"
    items: str = "entries"


def finite_vector(
    x: object,
    name: str,
    max_size: int,
    error: type[SpecDecError] = InvalidDistributionError,
    words: VectorWords = VectorWords(),
) -> np.ndarray:
    """``x`` as a new float64 vector (V,), 1 <= V <= ``max_size``, every entry finite;
    else ``error`` naming the first problem in ``words``."""
    arr = as_float_array(x, f"{name}: not {words.kind}", error)
    if arr.ndim != 1:
        raise error(f"{name}: must be {words.shape}, got an array of shape {arr.shape}.")
    if not 1 <= arr.size <= max_size:
        raise error(
            f"{name}: has {arr.size} {words.items}; between 1 and {max_size:,} are allowed."
        )
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise error(
            f"{name}: {words.item} {bad[0] + 1} is {arr[bad[0]]}; every entry must be a "
            "finite number."
        )
    return arr + 0.0


def validate_distribution(
    x: object, name: str = "p", *, normalize: bool = False, max_size: int = MAX_VOCAB
) -> np.ndarray:
    """Check an array-like probability vector and return it as float64 (V,).

    Rules: 1-D, 1 <= V <= ``max_size``, every entry finite and >= 0, and
    |sum - 1| <= ``SUM_TOLERANCE`` (or any positive sum with ``normalize``).
    The result is divided by its sum so that it sums to 1 in floating point.
    """
    arr = finite_vector(x, name, max_size)
    neg = np.flatnonzero(arr < 0)
    if neg.size:
        raise InvalidDistributionError(
            f"{name}: entry {neg[0] + 1} is {arr[neg[0]]:g}; probabilities must be >= 0."
        )
    return _check_sum(arr, name, normalize)


def parse_distribution(
    text: str, *, name: str = "p", normalize: bool = False, max_entries: int = MAX_TYPED_ENTRIES
) -> np.ndarray:
    """Typed text -> probability vector (V,), e.g. ``"0.4, 0.25; 1/5 10% .05"``.

    Entries are separated by commas, semicolons or spaces; each one is a
    decimal, a fraction or a percentage. Errors name the entry (1-based),
    what is wrong and what is allowed; a sum other than 1 is refused unless
    ``normalize=True`` (never fixed silently).
    """
    body = _check_text(text, name)
    if not body:
        raise InvalidDistributionError(f"{name}: is empty; type numbers such as 0.5, 0.3, 0.2.")
    _check_decimal_commas(body, name, InvalidDistributionError)
    entries = _split_entries(body)
    if len(entries) > max_entries:
        raise InvalidDistributionError(
            f"{name}: has {len(entries)} entries; at most {max_entries} are allowed."
        )
    values = np.array(_parse_entries(entries, name), dtype=np.float64)
    neg = np.flatnonzero(values < 0)
    if neg.size:
        i = int(neg[0])
        raise InvalidDistributionError(
            f"{name}: entry {i + 1} ({_short(entries[i])}) is negative; probabilities must be >= 0."
        )
    return _check_sum(values, name, normalize)


def default_labels(v: int) -> tuple[str, ...]:
    """Labels A, B, ..., Z, then T26, T27, ... for a vocabulary of size ``v``."""
    return tuple(chr(65 + i) if i < 26 else f"T{i}" for i in range(v))


def parse_labels(text: str, v: int) -> tuple[str, ...]:
    """Comma-separated vocabulary labels -> tuple of ``v`` distinct strings.

    An empty text gives the default labels A, B, C, ... Each label is
    stripped, non-empty, at most ``MAX_LABEL_LENGTH`` characters and unique.
    Labels are plain text: callers must display them escaped.
    """
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= MAX_VOCAB:
        raise InvalidParameterError(
            f"labels: a vocabulary of {v!r} tokens is not possible; allowed: 1 to {MAX_VOCAB:,}."
        )
    body = _check_text(text, "labels")
    if not body:
        return default_labels(v)
    labels = tuple(s.strip() for s in body.split(","))
    if len(labels) != v:
        raise InvalidParameterError(
            f"labels: got {len(labels)} labels for {v} tokens; give one per token, "
            "separated by commas (or leave the field empty for A, B, C, ...)."
        )
    for i, label in enumerate(labels, start=1):
        if not label:
            raise InvalidParameterError(f"labels: label {i} is empty.")
        if len(label) > MAX_LABEL_LENGTH:
            raise InvalidParameterError(
                f"labels: label {i} is {len(label)} characters; at most {MAX_LABEL_LENGTH}."
            )
        if not label.isprintable():
            raise InvalidParameterError(f"labels: label {i} contains a control character.")
    if len(set(labels)) != len(labels):
        dup = next(lab for lab in labels if labels.count(lab) > 1)
        raise InvalidParameterError(f"labels: {_short(dup)} appears twice; labels must differ.")
    return labels


def parse_coins(text: str, k: int) -> tuple[float, ...]:
    """Typed coins -> up to ``k`` uniforms in [0, 1), e.g. ``"0.5, 0.72, 0.1"``.

    A coin u accepts a draft token when u < min(1, p/q) (seed 000: "suppose
    it comes up 0.72, which is less than 0.833, so we accept"). Fewer than
    ``k`` coins is allowed: the rest are drawn from the seeded generator.
    """
    check_k(k)
    body = _check_text(text, "coins")
    _check_decimal_commas(body, "coins", InvalidParameterError)
    entries = _split_entries(body)
    if len(entries) > k:
        raise InvalidParameterError(f"coins: got {len(entries)} coins for K = {k} draft tokens.")
    coins = tuple(_parse_entries(entries, "coins"))
    for i, u in enumerate(coins, start=1):
        if not 0.0 <= u < 1.0:
            raise InvalidParameterError(
                f"coins: coin {i} is {u:g}; a coin is a uniform number in [0, 1)."
            )
    return coins


def check_k(k: object, *, k_max: int = MAX_K, name: str = "K", k_min: int = 1) -> int:
    """Validate a number of draft tokens (or another count): a whole number in k_min..k_max."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise InvalidParameterError(
            f"{name} must be a whole number, got {k!r}; allowed: {k_min} to {k_max}."
        )
    if not k_min <= k <= k_max:
        raise InvalidParameterError(f"{name} = {k} is out of range; allowed: {k_min} to {k_max}.")
    return int(k)


def validate_rows(rows: object, name: str, n_rows: int, v: int | None = None) -> np.ndarray:
    """Check a stack of distributions, one per position -> float64 (n_rows, V).

    Each row must pass :func:`validate_distribution`; errors name the row as
    ``"p at position 2"`` (1-based positions).
    """
    arr = as_float_array(rows, f"{name}: not a table of numbers")
    if arr.ndim != 2 or arr.shape[0] != n_rows or (v is not None and arr.shape[1] != v):
        want = f"({n_rows}, {v if v is not None else 'V'})"
        raise InvalidDistributionError(f"{name}: expected shape {want}, got {arr.shape}.")
    return np.stack(
        [validate_distribution(row, f"{name} at position {i + 1}") for i, row in enumerate(arr)]
    )


def position_rows(x: object, name: str, n_rows: int, v: int | None = None) -> np.ndarray:
    """Checked rows (n_rows, V), one per position; a 1-D vector is the same at every position.

    The seeds' simplification (one p and q for the whole round) or per-position
    rows; each row passes :func:`validate_rows`.
    """
    arr = as_float_array(x, f"{name}: not an array of numbers")
    if arr.ndim == 1:
        arr = np.tile(arr, (n_rows, 1))
    return validate_rows(arr, name, n_rows, v)


def validate_pair(p: object, q: object) -> tuple[np.ndarray, np.ndarray]:
    """Check a target p and a draft q over one vocabulary -> (p_target (V,), q_draft (V,)).

    Each passes :func:`validate_distribution` (p first); sizes that differ raise
    the one size-mismatch message (p and q are distributions over the same
    vocabulary, seed 000).
    """
    p_target = validate_distribution(p, "p")
    q_draft = validate_distribution(q, "q")
    if p_target.size != q_draft.size:
        raise InvalidDistributionError(mismatch_message(p_target.size, q_draft.size))
    return p_target, q_draft


def broadcast_rows(p: Sequence[float], q: Sequence[float], k: int) -> tuple[np.ndarray, np.ndarray]:
    """One shared p and q (the seeds' simplification) -> rows (K+1, V) and (K, V)."""
    k = check_k(k)
    p_target, q_draft = validate_pair(p, q)
    return np.tile(p_target, (k + 1, 1)), np.tile(q_draft, (k, 1))
