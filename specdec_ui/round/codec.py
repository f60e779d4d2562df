"""The round page's inputs as data: typed text and link parameters <-> a checked round.

Pure (no Streamlit): :func:`custom_spec` turns a :class:`CustomInputs` (the
typed fields) and optional per-position :class:`RowTables` into a
:class:`~specdec_ui.round.story.RoundSpec`, raising ``SpecDecError`` that
names the first bad entry; :func:`read_link` and :func:`share_params` turn
query parameters into a :class:`LinkState` and back. The widgets and the
session live in :mod:`specdec_ui.round.state`.

Link parameters: ``mode`` (preset|custom), ``preset`` (a scenario key), ``step``;
for custom rounds ``labels``, ``p``, ``q`` (rows separated by '|' for a
per-position table), ``k``, ``seed``, ``coins``, ``drafts``, ``final``, ``norm``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

import numpy as np

import specdec_core as sc
from specdec_core.errors import MAX_TEXT_LENGTH, mismatch_message
from specdec_ui.kit.share import LinkReader
from specdec_ui.presets import MAX_SEED, ROUND_K_MAX
from specdec_ui.round.story import RoundSpec, play_round

MAX_STEP_LINK = 64  # more than any round has (1 + 2K + 5 with K <= 8)
ROUND_KEYS = tuple(k for k, s in sc.SCENARIOS.items() if isinstance(s, sc.RoundScenario))
DEFAULT_PRESET = "000-round"
ROW_SEPARATOR = "|"
_P0, _Q0 = sc.SCENARIOS[DEFAULT_PRESET].p_rows[0], sc.SCENARIOS[DEFAULT_PRESET].q_rows[0]


@dataclass(frozen=True)
class CustomInputs:
    """The typed fields of a custom round (the widget of field ``f`` has key ``round_f``).

    Text as typed: ``p_text``/``q_text`` are vectors of the core's syntax (one
    shared row, or rows separated by '|'), ``drafts_text``/``final_text``
    labels, ``coins_text`` numbers in [0, 1); empty fields are drawn with ``seed``.
    """

    labels: str = "A, B, C, D, E"
    p_text: str = ", ".join(f"{x:.2f}" for x in _P0)
    q_text: str = ", ".join(f"{x:.2f}" for x in _Q0)
    k: int = 3
    drafts_text: str = ""
    coins_text: str = ""
    final_text: str = ""
    seed: int = 0
    normalise: bool = False

    def values(self) -> dict[str, object]:
        """Field name -> value (the widget values without their ``round_`` prefix)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> CustomInputs:
        """The inverse of :meth:`values`; other names are ignored, missing ones default."""
        return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})


@dataclass(frozen=True, eq=False)
class RowTables:
    """One row of p per position 1..K+1 and of q per position 1..K."""

    p_rows: np.ndarray  # (K+1, V)
    q_rows: np.ndarray  # (K, V)


@dataclass(frozen=True)
class RoundChoice:
    """The round a page shows: a preset, or ``custom`` inputs (with ``tables`` if per position)."""

    preset: str = DEFAULT_PRESET
    custom: CustomInputs | None = None  # None: the preset is shown
    tables: RowTables | None = None


@dataclass(frozen=True)
class LinkState:
    """What a link asks for: the round, the step to open (None: the first) and its problems."""

    choice: RoundChoice
    step: int | None
    problems: tuple[str, ...]


@dataclass(frozen=True)
class CustomCopy:
    """A preset as custom inputs (to edit it), with what had to change in ``notes``."""

    inputs: CustomInputs
    tables: RowTables | None
    notes: tuple[str, ...]


# ----------------------------------------------------------------------------- typed text
def whole_number(value: object) -> object:
    """A number field's value with the browser's 3.0 as 3; anything else as it is, so that
    the core refuses 2.5 by name ("K must be a whole number, got 2.5") instead of the
    page cutting it to 2 (issue 33, item 18)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def parse_rows(text: str, name: str, normalize: bool = False) -> np.ndarray:
    """Rows typed as 'p1 | p2 | ...' (each a vector of the core's syntax) -> (n, V).

    ``normalize`` divides each row by its sum (the student's explicit choice).
    """
    if not isinstance(text, str) or len(text) > MAX_TEXT_LENGTH:
        raise sc.InvalidParameterError(f"{name}: at most {MAX_TEXT_LENGTH} characters.")
    parts = text.split(ROW_SEPARATOR)
    rows = [
        sc.parse_distribution(
            part, normalize=normalize, name=name if len(parts) == 1 else f"{name} row {i + 1}"
        )
        for i, part in enumerate(parts)
    ]
    if len({r.size for r in rows}) != 1:
        raise sc.InvalidDistributionError(
            f"{name}: every row must have the same number of entries."
        )
    return np.stack(rows)


def rows_text(rows: np.ndarray) -> str:
    """(n, V) -> '0.4, 0.6 | 0.5, 0.5' (the inverse of :func:`parse_rows`)."""
    return f" {ROW_SEPARATOR} ".join(", ".join(f"{x:.6g}" for x in row) for row in rows)


def fit_rows(rows: np.ndarray, name: str, n: int, what: str) -> np.ndarray:
    """One shared row -> ``n`` copies; ``n`` rows stay; any other count is refused."""
    if rows.shape[0] == 1:
        return np.tile(rows[0], (n, 1))
    if rows.shape[0] != n:
        raise sc.InvalidDistributionError(
            f"{name}: has {rows.shape[0]} rows; give one shared row or {n} rows ({what})."
        )
    return rows


def typed_tables(inputs: CustomInputs) -> RowTables | None:
    """The per-position tables typed into p and q ('|' rows), or None for shared rows."""
    norm = bool(inputs.normalise)
    p_rows = parse_rows(inputs.p_text, "p", norm)
    q_rows = parse_rows(inputs.q_text, "q", norm)
    if p_rows.shape[0] == 1 and q_rows.shape[0] == 1:
        return None
    k = sc.check_k(inputs.k, k_max=ROUND_K_MAX)
    return RowTables(
        fit_rows(p_rows, "p", k + 1, "positions 1 to K+1"),
        fit_rows(q_rows, "q", k, "positions 1 to K"),
    )


def parse_tokens(text: str, labels: tuple[str, ...], k: int) -> tuple[int, ...] | None:
    """'A, B, C' -> token ids (exactly K labels), or None for an empty text (sample from q)."""
    body = text.strip() if isinstance(text, str) else ""
    if not body:
        return None
    if len(body) > MAX_TEXT_LENGTH:
        raise sc.InvalidParameterError(f"draft tokens: at most {MAX_TEXT_LENGTH} characters.")
    names = [s.strip() for s in body.split(",")]
    if len(names) != k:
        raise sc.InvalidParameterError(
            f"draft tokens: got {len(names)} labels for K = {k}; type {k} labels separated "
            "by commas, or leave the field empty to sample them from q."
        )
    return tuple(
        _token_id(name, labels, f"draft tokens: entry {i + 1}") for i, name in enumerate(names)
    )


def _token_id(name: str, labels: tuple[str, ...], where: str) -> int:
    if name not in labels:
        shown = name if len(name) <= 20 else name[:20] + "…"
        raise sc.InvalidParameterError(
            f"{where} ({shown!r}) is not one of the labels {', '.join(labels[:12])}"
            f"{', ...' if len(labels) > 12 else ''}."
        )
    return labels.index(name)


def parse_final(text: str, labels: tuple[str, ...]) -> int | None:
    """One label -> its id, or None for an empty text (draw it with the seed)."""
    body = text.strip() if isinstance(text, str) else ""
    if not body:
        return None
    return _token_id(body, labels, "final token")


# ----------------------------------------------------------------------------- custom round
def _table_rows(table, name: str, n: int, normalize: bool) -> np.ndarray:
    if normalize:
        arr = np.asarray(table, dtype=np.float64)
        if arr.ndim == 2:
            table = [
                sc.validate_distribution(row, f"{name} at position {i + 1}", normalize=True)
                for i, row in enumerate(arr)
            ]
    return sc.validate_rows(table, name, n)


def _custom_rows(inputs: CustomInputs, k: int, tables: RowTables | None):
    """(p_rows (K+1, V), q_rows (K, V)) from the tables, or from the typed shared rows."""
    norm = bool(inputs.normalise)
    if tables is None:
        p_rows = fit_rows(parse_rows(inputs.p_text, "p", norm), "p", k + 1, "positions 1 to K+1")
        q_rows = fit_rows(parse_rows(inputs.q_text, "q", norm), "q", k, "positions 1 to K")
    else:
        p_rows = _table_rows(tables.p_rows, "p", k + 1, norm)
        q_rows = _table_rows(tables.q_rows, "q", k, norm)
    if p_rows.shape[1] != q_rows.shape[1]:
        raise sc.InvalidDistributionError(mismatch_message(p_rows.shape[1], q_rows.shape[1]))
    return p_rows, q_rows


def _check_drafts(spec: RoundSpec) -> None:
    """A typed draft token must have q > 0 at its position (the draft sampled it)."""
    for i, t in enumerate(spec.draft_tokens or ()):
        if spec.q_rows[i, t] <= 0:
            raise sc.InvalidParameterError(
                f"draft tokens: entry {i + 1} ({spec.labels[t]!r}) has q = 0 at position "
                f"{i + 1}, so the draft could not have sampled it; pick a token with q > 0."
            )


def _check_final(spec: RoundSpec) -> None:
    """A typed final token must have probability > 0 where it is drawn (residual or bonus)."""
    if spec.final_token is None:
        return
    free = play_round(replace(spec, final_token=None))
    dist, t, labels = free.final_distribution, spec.final_token, spec.labels
    if dist[t] > 0:
        return
    where = (
        f"the leftover max(0, p − q) at the rejected position {free.final_position + 1}"
        if free.final_kind == "resample"
        else f"p at the bonus position {free.final_position + 1}"
    )
    allowed = ", ".join(labels[i] for i in np.flatnonzero(dist > 0)[:12])
    raise sc.InvalidParameterError(
        f"final token ({labels[t]!r}) has probability 0 under {where}; choose one of "
        f"{allowed}, or leave the field empty to draw it."
    )


def custom_spec(inputs: CustomInputs, tables: RowTables | None = None) -> RoundSpec:
    """A custom round from typed text (or per-position tables), checked by playing it.

    p and q are typed vectors shared by all positions (the seeds'
    simplification), or ``tables`` (p: (K+1, V), q: (K, V)). Raises
    ``SpecDecError`` naming the first bad entry.
    """
    k = sc.check_k(inputs.k, k_max=ROUND_K_MAX)
    p_rows, q_rows = _custom_rows(inputs, k, tables)
    labels = sc.parse_labels(inputs.labels, p_rows.shape[1])
    spec = RoundSpec(
        labels=labels,
        p_rows=p_rows,
        q_rows=q_rows,
        draft_tokens=parse_tokens(inputs.drafts_text, labels, k),
        coins=sc.parse_coins(inputs.coins_text, k),
        final_token=parse_final(inputs.final_text, labels),
        seed=int(inputs.seed),
        origin="custom",
    )
    _check_drafts(spec)
    _check_final(spec)
    play_round(spec)  # anything else the core refuses fails here
    return spec


# The custom input a message is about, from its first words: the core's and the codec's
# messages name the entry first ("K = 0 is out of range", "p: entry 2 ...", "q at position
# 1: ...", "draft tokens: ...", "coins: ...", "final token (...)", "labels: ..."). Checked
# in order; "p has 3 entries but q has 4" (sizes differ) is shown under q, the field typed
# last. A message that names none of them returns None (the page shows it below the form).
ERROR_FIELDS: tuple[tuple[str, str], ...] = (
    (r"K\b", "k"),
    (r"labels\b", "labels"),
    (r"[pq] at position\b", "tables"),
    (r"p has \d+ entries but q has", "q"),
    (r"p\b", "p"),
    (r"q\b", "q"),
    (r"draft tokens\b", "drafts"),
    (r"coins\b", "coins"),
    (r"final token\b", "final"),
)


def error_field(message: str) -> str | None:
    """The custom input (``k``, ``labels``, ``p``, ``q``, ``tables``, ``drafts``, ``coins``,
    ``final``) that ``message`` is about, or None when it names none of them."""
    for pattern, field in ERROR_FIELDS:
        if re.match(pattern, message):
            return field
    return None


def scenario_as_custom(key: str) -> CustomCopy:
    """A preset's inputs as custom inputs (to edit it), plus notes on what had to change."""
    s = sc.SCENARIOS[key]
    notes = []
    labels = list(s.labels)
    for i, lab in enumerate(labels):
        if "," in lab:
            labels[i] = lab.replace(",", "comma")
            notes.append(f"The label {lab!r} became {labels[i]!r}: labels are separated by commas.")
    p_rows, q_rows = s.arrays()
    shared = bool((p_rows == p_rows[0]).all() and (q_rows == q_rows[0]).all())
    inputs = CustomInputs(
        labels=", ".join(labels),
        p_text=rows_text(p_rows[:1]),
        q_text=rows_text(q_rows[:1]),
        k=s.k_drafts,
        drafts_text=", ".join(labels[t] for t in s.draft_tokens),
        coins_text=", ".join(f"{u:g}" for u in s.coins),
        final_text=labels[s.final_token],
    )
    return CustomCopy(inputs, None if shared else RowTables(p_rows, q_rows), tuple(notes))


# ----------------------------------------------------------------------------- links
def _checked_text(raw: str) -> str:
    if len(raw) > MAX_TEXT_LENGTH:
        raise ValueError(f"longer than {MAX_TEXT_LENGTH} characters")
    if not raw.isprintable():
        raise ValueError("contains a control character")
    return raw


def _checked_rows(name: str):
    def parse(raw: str) -> str:
        _checked_text(raw)
        for part in raw.split(ROW_SEPARATOR):  # sums are checked with the norm setting later
            sc.parse_distribution(part, name=name, normalize=True)
        return raw

    return parse


def _custom_from_link(link: LinkReader) -> CustomInputs:
    """The custom fields of a link, each checked on its own (bad ones become problems)."""
    base = CustomInputs()
    typed = "p" in link.params or "q" in link.params  # then default labels fit their size
    return CustomInputs(
        labels=link.get("labels", _checked_text, "" if typed else base.labels),
        p_text=link.get("p", _checked_rows("p"), base.p_text),
        q_text=link.get("q", _checked_rows("q"), base.q_text),
        k=link.int_in("k", 1, ROUND_K_MAX, base.k),
        seed=link.int_in("seed", 0, MAX_SEED, base.seed),
        coins_text=link.get("coins", _checked_text, ""),
        drafts_text=link.get("drafts", _checked_text, ""),
        final_text=link.get("final", _checked_text, ""),
        normalise=link.choice("norm", ("0", "1"), "0") == "1",
    )


def _checked_custom(link: LinkReader) -> tuple[CustomInputs, RowTables | None]:
    """The link's custom round if it plays, else the default custom round (and a problem).

    With per-position tables the typed fields keep the first row; the tables hold all.
    """
    inputs = _custom_from_link(link)
    try:
        tables = typed_tables(inputs)
        custom_spec(inputs, tables)
    except sc.SpecDecError as err:
        link.problems.append(
            f"the custom round in this link is not valid ({err}); the default custom round is used"
        )
        return CustomInputs(), None
    if tables is not None:
        inputs = replace(
            inputs, p_text=rows_text(tables.p_rows[:1]), q_text=rows_text(tables.q_rows[:1])
        )
    return inputs, tables


def read_link(params: Mapping[str, str]) -> LinkState:
    """Query parameters -> page state. Bad values become problems and fall back to defaults."""
    link = LinkReader(params)
    mode = link.choice("mode", ("preset", "custom"), "preset")
    preset = link.choice("preset", ROUND_KEYS, DEFAULT_PRESET)
    step = link.int_in("step", 0, MAX_STEP_LINK, 0) if "step" in link.params else None
    choice = RoundChoice(preset=preset)
    if mode == "custom":
        inputs, tables = _checked_custom(link)
        choice = RoundChoice(preset=preset, custom=inputs, tables=tables)
    return LinkState(choice, step, tuple(link.problems))


def share_params(choice: RoundChoice, step: int) -> dict[str, str]:
    """The query parameters that reopen this round at ``step`` (inverse of :func:`read_link`)."""
    inputs, tables = choice.custom, choice.tables
    if inputs is None:
        return {"mode": "preset", "preset": choice.preset, "step": str(step)}
    out = {
        "mode": "custom",
        "labels": str(inputs.labels),
        "p": rows_text(tables.p_rows) if tables is not None else str(inputs.p_text),
        "q": rows_text(tables.q_rows) if tables is not None else str(inputs.q_text),
        "k": str(inputs.k),
        "seed": str(inputs.seed),
    }
    for name, text in (
        ("coins", inputs.coins_text),
        ("drafts", inputs.drafts_text),
        ("final", inputs.final_text),
    ):
        if str(text).strip():
            out[name] = str(text).strip()
    if inputs.normalise:
        out["norm"] = "1"
    out["step"] = str(step)
    return out
