"""Inputs of the "Step through a round" page: presets, custom rounds, links, the step.

The pure part (``parse_*``, :func:`custom_spec`, :func:`read_link`,
:func:`share_params`) turns typed text and link parameters into a
:class:`~specdec_ui.round_story.RoundSpec`, raising ``SpecDecError`` (or
recording a link problem) that names the entry. The Streamlit part renders
the widgets (keys prefixed ``round_``) and keeps the page state in
``st.session_state``:

- ``round_step_index``: the step on screen (a non-widget key);
- ``round_sig``: the signature of the round on screen (a new round resets the step);
- ``round_last_valid``: the last valid RoundSpec, shown while an input is invalid;
- ``round_saved_<name>``: copies of the custom widgets' values, so they survive
  while the custom inputs are hidden (Streamlit forgets unrendered widgets).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import streamlit as st

import specdec_core as sc
from specdec_core.errors import MAX_TEXT_LENGTH

from .round_story import RoundSpec, play_round, spec_from_scenario
from .share import LinkReader
from .text import md_escape
from .widgets import MAX_SEED, seed_control

MODES = ("Preset", "Custom")
ROWS_SHARED = "One p and q for every position"
ROWS_TABLE = "A row per position (table)"
ROW_MODES = (ROWS_SHARED, ROWS_TABLE)
K_MAX_PAGE = 8
MAX_STEP_LINK = 64  # more than any round has (1 + 2K + 5 with K <= 8)
ROUND_KEYS = tuple(k for k, s in sc.SCENARIOS.items() if isinstance(s, sc.RoundScenario))
DEFAULT_PRESET = "000-round"
_P0, _Q0 = sc.SCENARIOS["000-round"].p_rows[0], sc.SCENARIOS["000-round"].q_rows[0]
DEFAULTS: dict[str, object] = {
    "round_labels": "A, B, C, D, E",
    "round_p_text": ", ".join(f"{x:.2f}" for x in _P0),
    "round_q_text": ", ".join(f"{x:.2f}" for x in _Q0),
    "round_k": 3,
    "round_rows": ROWS_SHARED,
    "round_drafts_text": "",
    "round_coins_text": "",
    "round_final_text": "",
    "round_seed": 0,
    "round_normalise": False,
}
ROW_SEPARATOR = "|"


# ----------------------------------------------------------------------------- pure parsing
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


def _fit_rows(rows: np.ndarray, name: str, n: int, what: str) -> np.ndarray:
    if rows.shape[0] == 1:
        return np.tile(rows[0], (n, 1))
    if rows.shape[0] != n:
        raise sc.InvalidDistributionError(
            f"{name}: has {rows.shape[0]} rows; give one shared row or {n} rows ({what})."
        )
    return rows


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


def _table_rows(table, name: str, n: int, normalize: bool) -> np.ndarray:
    if normalize:
        arr = np.asarray(table, dtype=np.float64)
        if arr.ndim == 2:
            table = [
                sc.validate_distribution(row, f"{name} at position {i + 1}", normalize=True)
                for i, row in enumerate(arr)
            ]
    return sc.validate_rows(table, name, n)


def custom_spec(
    labels_text: str,
    p_text: str,
    q_text: str,
    k: int,
    drafts_text: str = "",
    coins_text: str = "",
    final_text: str = "",
    seed: int = 0,
    p_table: np.ndarray | None = None,
    q_table: np.ndarray | None = None,
    normalize: bool = False,
) -> RoundSpec:
    """A custom round from typed text (or per-position tables), checked by playing it.

    p and q are typed vectors shared by all positions (the seeds'
    simplification), or ``p_table`` (K+1, V) / ``q_table`` (K, V). Raises
    ``SpecDecError`` naming the first bad entry.
    """
    k = sc.check_k(k, k_max=K_MAX_PAGE)
    if p_table is None:
        p_rows = _fit_rows(parse_rows(p_text, "p", normalize), "p", k + 1, "positions 1 to K+1")
    else:
        p_rows = _table_rows(p_table, "p", k + 1, normalize)
    if q_table is None:
        q_rows = _fit_rows(parse_rows(q_text, "q", normalize), "q", k, "positions 1 to K")
    else:
        q_rows = _table_rows(q_table, "q", k, normalize)
    if p_rows.shape[1] != q_rows.shape[1]:
        raise sc.InvalidDistributionError(
            f"p has {p_rows.shape[1]} entries but q has {q_rows.shape[1]}; they must match."
        )
    labels = sc.parse_labels(labels_text, p_rows.shape[1])
    spec = RoundSpec(
        labels=labels,
        p_rows=p_rows,
        q_rows=q_rows,
        draft_tokens=parse_tokens(drafts_text, labels, k),
        coins=sc.parse_coins(coins_text, k),
        final_token=parse_final(final_text, labels),
        seed=int(seed),
        origin="custom",
    )
    if spec.draft_tokens is not None:
        for i, t in enumerate(spec.draft_tokens):
            if q_rows[i, t] <= 0:
                raise sc.InvalidParameterError(
                    f"draft tokens: entry {i + 1} ({labels[t]!r}) has q = 0 at position {i + 1}, "
                    "so the draft could not have sampled it; pick a token with q > 0."
                )
    if spec.final_token is not None:
        free = play_round(replace(spec, final_token=None))
        dist, t = free.final_distribution, spec.final_token
        if dist[t] <= 0:
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
    play_round(spec)  # anything else the core refuses fails here
    return spec


@dataclass
class LinkState:
    """What a link asks for: session values to set, and the step to open."""

    values: dict[str, object]
    table: tuple[np.ndarray, np.ndarray] | None  # per-position rows (p, q), if any
    step: int | None
    problems: list[str]


def read_link(params: Mapping[str, str]) -> LinkState:
    """Query parameters -> page state. Bad values become problems and fall back to defaults.

    Parameters: ``mode`` (preset|custom), ``preset`` (a scenario key), ``step``;
    for custom rounds ``labels``, ``p``, ``q`` (rows separated by '|' for a
    per-position table), ``k``, ``seed``, ``coins``, ``drafts``, ``final``.
    """
    link = LinkReader(params)
    values: dict[str, object] = {}
    mode = link.choice("mode", ("preset", "custom"), "preset")
    values["round_mode"] = "Custom" if mode == "custom" else "Preset"
    values["round_preset"] = link.choice("preset", ROUND_KEYS, DEFAULT_PRESET)
    step = link.int_in("step", 0, MAX_STEP_LINK, 0) if "step" in link.params else None
    table = None
    if mode == "custom":
        typed = "p" in link.params or "q" in link.params  # then default labels fit their size
        text = {
            "round_labels": link.get(
                "labels", _checked_text, "" if typed else DEFAULTS["round_labels"]
            ),
            "round_p_text": link.get("p", _checked_rows("p"), DEFAULTS["round_p_text"]),
            "round_q_text": link.get("q", _checked_rows("q"), DEFAULTS["round_q_text"]),
            "round_k": link.int_in("k", 1, K_MAX_PAGE, DEFAULTS["round_k"]),
            "round_seed": link.int_in("seed", 0, MAX_SEED, DEFAULTS["round_seed"]),
            "round_coins_text": link.get("coins", _checked_text, ""),
            "round_drafts_text": link.get("drafts", _checked_text, ""),
            "round_final_text": link.get("final", _checked_text, ""),
            "round_normalise": link.choice("norm", ("0", "1"), "0") == "1",
        }
        try:
            norm = bool(text["round_normalise"])
            p_rows = parse_rows(str(text["round_p_text"]), "p", norm)
            q_rows = parse_rows(str(text["round_q_text"]), "q", norm)
            is_table = p_rows.shape[0] > 1 or q_rows.shape[0] > 1
            k = int(text["round_k"])
            if is_table:
                p_rows = _fit_rows(p_rows, "p", k + 1, "positions 1 to K+1")
                q_rows = _fit_rows(q_rows, "q", k, "positions 1 to K")
                table = (p_rows, q_rows)
            custom_spec(
                str(text["round_labels"]),
                str(text["round_p_text"]),
                str(text["round_q_text"]),
                k,
                str(text["round_drafts_text"]),
                str(text["round_coins_text"]),
                str(text["round_final_text"]),
                int(text["round_seed"]),
                *(table or (None, None)),
                normalize=norm,
            )
        except sc.SpecDecError as err:
            link.problems.append(
                f"the custom round in this link is not valid ({err}); "
                "the default custom round is used"
            )
            text, table = dict(DEFAULTS), None
        text["round_rows"] = ROWS_TABLE if table is not None else ROWS_SHARED
        if table is not None:  # the typed fields keep the first row, the table holds all
            text["round_p_text"] = rows_text(table[0][:1])
            text["round_q_text"] = rows_text(table[1][:1])
        values.update(text)
    return LinkState(values, table, step, link.problems)


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


def share_params(
    values: Mapping[str, object], step: int, table: tuple[np.ndarray, np.ndarray] | None = None
) -> dict[str, str]:
    """The query parameters that reopen this page state (inverse of :func:`read_link`)."""
    if values.get("round_mode") != "Custom":
        return {
            "mode": "preset",
            "preset": str(values.get("round_preset", DEFAULT_PRESET)),
            "step": str(step),
        }
    out = {
        "mode": "custom",
        "labels": str(values["round_labels"]),
        "p": rows_text(table[0]) if table is not None else str(values["round_p_text"]),
        "q": rows_text(table[1]) if table is not None else str(values["round_q_text"]),
        "k": str(values["round_k"]),
        "seed": str(values["round_seed"]),
    }
    for key, name in (
        ("round_coins_text", "coins"),
        ("round_drafts_text", "drafts"),
        ("round_final_text", "final"),
    ):
        if str(values.get(key, "")).strip():
            out[name] = str(values[key]).strip()
    if values.get("round_normalise"):
        out["norm"] = "1"
    out["step"] = str(step)
    return out


def scenario_as_custom(
    key: str,
) -> tuple[dict[str, object], tuple[np.ndarray, np.ndarray] | None, list[str]]:
    """A preset's inputs as custom values (to edit it), plus notes on what had to change."""
    s = sc.SCENARIOS[key]
    notes = []
    labels = list(s.labels)
    for i, lab in enumerate(labels):
        if "," in lab:
            labels[i] = lab.replace(",", "comma")
            notes.append(f"The label {lab!r} became {labels[i]!r}: labels are separated by commas.")
    p_rows, q_rows = s.arrays()
    shared = bool((p_rows == p_rows[0]).all() and (q_rows == q_rows[0]).all())
    values = {
        "round_mode": "Custom",
        "round_labels": ", ".join(labels),
        "round_p_text": rows_text(p_rows[:1]),
        "round_q_text": rows_text(q_rows[:1]),
        "round_k": s.k_drafts,
        "round_rows": ROWS_SHARED if shared else ROWS_TABLE,
        "round_drafts_text": ", ".join(labels[t] for t in s.draft_tokens),
        "round_coins_text": ", ".join(f"{u:g}" for u in s.coins),
        "round_final_text": labels[s.final_token],
    }
    return values, (None if shared else (p_rows, q_rows)), notes


# ----------------------------------------------------------------------------- streamlit state
_KEPT = {**DEFAULTS, "round_preset": DEFAULT_PRESET}
PERSIST = tuple(_KEPT)  # widgets that are not always on screen, so Streamlit would forget them


def _restore_custom_values() -> None:
    """Give every hidden widget its last value back (before any widget of this run exists).

    Writing a widget's own value back through the Session State API makes
    Streamlit keep it even in a run where the widget is not drawn.
    """
    ss = st.session_state
    for key in PERSIST:
        ss[key] = (
            ss[key]
            if key in ss
            else ss.get(f"round_saved_{key.removeprefix('round_')}", _KEPT[key])
        )


def _save_custom_values() -> None:
    ss = st.session_state
    for key in PERSIST:
        if key in ss:
            ss[f"round_saved_{key.removeprefix('round_')}"] = ss[key]


def _set_table(p_rows: np.ndarray, q_rows: np.ndarray, labels: tuple[str, ...]) -> None:
    ss = st.session_state
    version = int(ss.get("round_table", {}).get("version", 0)) + 1
    ss["round_table"] = {
        "p": np.array(p_rows),
        "q": np.array(q_rows),
        "labels": tuple(labels),
        "k": int(q_rows.shape[0]),
        "version": version,
    }


def apply_link_once() -> LinkState | None:
    """On the first run of a session, copy the link's state into session_state."""
    ss = st.session_state
    if ss.get("round_link_read"):
        return None
    ss["round_link_read"] = True
    state = read_link(st.query_params.to_dict())
    for key, value in state.values.items():
        ss[key] = value
        if key in PERSIST:
            ss[f"round_saved_{key.removeprefix('round_')}"] = value
    if state.table is not None:
        try:
            labels = sc.parse_labels(str(state.values["round_labels"]), state.table[0].shape[1])
        except sc.SpecDecError:
            labels = sc.default_labels(state.table[0].shape[1])
        _set_table(*state.table, labels)
    ss["round_link_step"] = state.step
    return state


def _edit_preset_in_custom(key: str) -> None:
    values, table, notes = scenario_as_custom(key)
    ss = st.session_state
    for name, value in values.items():
        ss[name] = value
    if table is not None:
        _set_table(*table, tuple(lab.strip() for lab in str(values["round_labels"]).split(",")))
    ss["round_copy_notes"] = notes


def _preset_label(key: str) -> str:
    s = sc.SCENARIOS[key]
    return f"{s.title}  [seed {s.source}]"


def preset_controls(column) -> RoundSpec:
    """The preset picker (in ``column``), then the scenario's source, lesson and note."""
    key = column.selectbox(
        "Worked example",
        ROUND_KEYS,
        key="round_preset",
        format_func=_preset_label,
        help="Every round scenario of the two seed documents.",
    )
    s = sc.SCENARIOS[key]
    st.info(
        f"**Lesson.** {md_escape(s.lesson)}\n\n*Source: seed {md_escape(s.source)}"
        f"{f', cell {s.cell}' if s.cell else ''}.*",
        icon="💡",
    )
    if s.note:
        st.markdown(f"📝 **Note on the numbers.** {md_escape(s.note)}")
    st.button(
        "✏️ Edit this example in Custom mode",
        key="round_edit_preset",
        on_click=_edit_preset_in_custom,
        args=(key,),
        help="Copies its p, q, drafts, coins and final token into the custom inputs.",
    )
    return spec_from_scenario(s)


def _table_editor(
    name: str, rows: np.ndarray, labels: tuple[str, ...], bonus: bool, version: int
) -> np.ndarray:
    index = [
        f"position {i + 1}" + (" (bonus)" if bonus and i == len(rows) - 1 else "")
        for i in range(len(rows))
    ]
    frame = pd.DataFrame(rows, columns=list(labels), index=index)
    config = {
        lab: st.column_config.NumberColumn(
            lab, min_value=0.0, max_value=1.0, step=0.01, format="%.3f"
        )
        for lab in labels
    }
    edited = st.data_editor(
        frame, key=f"round_{name}_table_{version}", column_config=config, num_rows="fixed"
    )
    return edited.to_numpy(dtype=np.float64, na_value=np.nan)


def custom_controls() -> tuple[RoundSpec | None, sc.SpecDecError | None, tuple | None]:
    """The custom inputs. Returns (spec, None, table) or (None, error, table)."""
    ss = st.session_state
    for note in ss.pop("round_copy_notes", []):
        st.caption(note)
    c1, c2 = st.columns([3, 1])
    c1.text_input(
        "Vocabulary labels (separated by commas; empty = A, B, C, ...)",
        key="round_labels",
        max_chars=MAX_TEXT_LENGTH,
    )
    c2.number_input(
        "K: draft tokens per round", min_value=1, max_value=K_MAX_PAGE, step=1, key="round_k"
    )
    c1, c2 = st.columns([3, 1])
    rows_mode = c1.radio(
        "Distributions",
        ROW_MODES,
        key="round_rows",
        horizontal=True,
        help="The seeds use one p and q for every position; a table lets "
        "each position have its own.",
    )
    c2.checkbox(
        "Normalise",
        key="round_normalise",
        help="Divide each row of p and q by its sum. Off: p and q must sum to 1 (a "
        "typo is reported, never fixed). On: 4, 3, 2, 1 means 0.4, 0.3, 0.2, 0.1.",
    )
    table_mode = rows_mode == ROWS_TABLE
    c1, c2 = st.columns(2)
    c1.text_input(
        "p: the target's distribution" + (" (fills the table)" if table_mode else ""),
        key="round_p_text",
        max_chars=MAX_TEXT_LENGTH,
        help="Decimals (0.25), fractions (1/4) or percentages (25%), separated by "
        "commas or spaces; they must sum to 1.",
    )
    c2.text_input(
        "q: the draft's distribution" + (" (fills the table)" if table_mode else ""),
        key="round_q_text",
        max_chars=MAX_TEXT_LENGTH,
        help="Same syntax as p, same number of entries.",
    )
    c1, c2, c3 = st.columns(3)
    c1.text_input(
        "Draft tokens (labels; empty = sample from q)",
        key="round_drafts_text",
        max_chars=MAX_TEXT_LENGTH,
        placeholder="e.g. A, B, C",
        help="Type K labels to choose the drafts by hand.",
    )
    c2.text_input(
        "Coins u (empty = draw them)",
        key="round_coins_text",
        max_chars=MAX_TEXT_LENGTH,
        placeholder="e.g. 0.5, 0.72, 0.9",
        help="Up to K numbers in [0, 1); the missing ones are drawn with the seed. "
        "A draft is kept when u < a.",
    )
    c3.text_input(
        "Final token (label; empty = draw it)",
        key="round_final_text",
        max_chars=MAX_TEXT_LENGTH,
        placeholder="e.g. D",
        help="The resampled or bonus token; it must have probability > 0 there.",
    )
    with st.columns(3)[0]:
        seed = seed_control("round")
    _save_custom_values()
    table = None
    try:
        k = sc.check_k(int(ss["round_k"]), k_max=K_MAX_PAGE)
        if rows_mode == ROWS_TABLE:
            table = _tables(k)
        return (
            custom_spec(
                ss["round_labels"],
                ss["round_p_text"],
                ss["round_q_text"],
                k,
                ss["round_drafts_text"],
                ss["round_coins_text"],
                ss["round_final_text"],
                seed,
                *(table or (None, None)),
                normalize=bool(ss["round_normalise"]),
            ),
            None,
            table,
        )
    except sc.SpecDecError as err:
        return None, err, table


def _table_base(k: int, base: dict | None, refill: bool):
    """The new table contents (p, q, labels, note), or None when the tables stay as they are.

    Labels renamed or K changed: the numbers on screen are kept (new positions
    copy the last row). First fill, the Refill button, or a new vocabulary
    size: the rows are filled from the typed p and q.
    """
    ss = st.session_state
    if base is not None and not refill:
        try:
            labels = sc.parse_labels(ss["round_labels"], base["p"].shape[1])
        except sc.SpecDecError:
            labels = None  # a different number of tokens: fill from the typed p and q
        if labels is not None:
            if base["k"] == k and base["labels"] == labels:
                return None
            shown = ss.get("round_table_shown")
            p_cur, q_cur = (
                (shown[0], shown[1])
                if shown and shown[2] == base["version"]
                else (base["p"], base["q"])
            )
            p_new = np.vstack([p_cur[: k + 1]] + [p_cur[-1:]] * max(0, k + 1 - len(p_cur)))
            q_new = np.vstack([q_cur[:k]] + [q_cur[-1:]] * max(0, k - len(q_cur)))
            note = (
                "K changed: the tables keep the rows of the positions that remain; new "
                "positions copy the last row."
                if base["k"] != k
                else "The columns took the new labels; the numbers are kept."
            )
            return p_new, q_new, labels, note
    norm = bool(ss["round_normalise"])
    p_one = parse_rows(ss["round_p_text"], "p", norm)[0]
    q_one = parse_rows(ss["round_q_text"], "q", norm)[0]
    if p_one.size != q_one.size:
        raise sc.InvalidDistributionError(
            f"p has {p_one.size} entries but q has {q_one.size}; they must match."
        )
    labels = sc.parse_labels(ss["round_labels"], p_one.size)
    note = (
        "The number of tokens changed, so the tables were filled from the typed p and q."
        if base is not None and not refill
        else ""
    )
    return np.tile(p_one, (k + 1, 1)), np.tile(q_one, (k, 1)), labels, note


def _tables(k: int) -> tuple[np.ndarray, np.ndarray]:
    """The per-position tables (st.data_editor), one row per position.

    A bad entry elsewhere never hides the tables: they stay on screen (with
    their edits) and the error is raised after they are drawn.
    """
    ss = st.session_state
    refill = st.button("↺ Refill the tables from the typed p and q", key="round_refill")
    base = ss.get("round_table")
    error = None
    try:
        new = _table_base(k, base, refill)
    except sc.SpecDecError as err:
        new, error = None, err
    if new is not None:
        _set_table(*new[:3])
        base = ss["round_table"]
        if new[3]:
            st.caption(new[3])
    if base is None:
        raise error
    st.caption(
        "Edit any cell; each row must sum to 1. The typed p and q above fill the tables "
        "the first time, with the Refill button, or when the number of tokens changes."
    )
    c1, c2 = st.columns(2)
    with c1:
        st.markdown("**p (target), positions 1 to K + 1**")
        p_rows = _table_editor("p", base["p"], base["labels"], True, base["version"])
    with c2:
        st.markdown("**q (draft), positions 1 to K**")
        q_rows = _table_editor("q", base["q"], base["labels"], False, base["version"])
    ss["round_table_shown"] = (p_rows, q_rows, base["version"])
    if error is not None:
        raise error
    norm = bool(ss["round_normalise"])
    parse_rows(ss["round_p_text"], "p", norm)  # the typed rows fill the table later: check now
    parse_rows(ss["round_q_text"], "q", norm)
    return p_rows, q_rows


def round_controls() -> tuple[RoundSpec, sc.SpecDecError | None, tuple]:
    """Render the inputs; return (spec to show, input error or None, (values, table)).

    While an input is invalid the last valid round stays on screen, and the
    returned (values, table), which :func:`share_params` turns into a link,
    are those of that last valid round.
    """
    ss = st.session_state
    _restore_custom_values()
    c1, c2 = st.columns([1, 4])
    mode = c1.radio(
        "Round",
        MODES,
        key="round_mode",
        help="A worked example from the seeds, or your own p, q and coins.",
    )
    error, table = None, None
    if mode == "Preset":
        spec = preset_controls(c2)
    else:
        c2.markdown(
            "**Your own round.** Type p and q (or edit them per position), K, and "
            "optionally the drafts, the coins and the final token; anything left "
            "empty is drawn with the seed."
        )
        spec, error, table = custom_controls()
    _save_custom_values()
    values = {key: ss.get(key) for key in (*PERSIST, "round_mode")}
    if spec is not None:
        ss["round_last_valid"] = (spec, values, table)
        return spec, None, (values, table)
    fallback = (
        spec_from_scenario(sc.SCENARIOS[DEFAULT_PRESET]),
        {"round_mode": "Preset", "round_preset": DEFAULT_PRESET},
        None,
    )
    spec, values, table = ss.get("round_last_valid", fallback)
    return spec, error, (values, table)


def link_message(problems: list[str]) -> str:
    """Markdown-safe warning text for the problems of a link ('' when there are none)."""
    reader = LinkReader({})
    reader.problems = list(problems)
    return reader.message()


def current_step(signature: str, n_steps: int) -> tuple[int, str]:
    """The step to show (0-based) and a problem with the link's step, if any.

    A new round (signature) starts at step 0, except the first round of a
    link, which opens at the link's step when it exists.
    """
    ss = st.session_state
    problem = ""
    if ss.get("round_sig") != signature:
        ss["round_sig"] = signature
        step = ss.pop("round_link_step", None)
        if step is not None and step >= n_steps:
            problem = (
                f"link parameter 'step': {step} is beyond the last step ({n_steps - 1}) "
                "of this round; it opens at step 0"
            )
            step = None
        ss["round_step_index"] = step or 0
    ss.pop("round_link_step", None)
    index = int(ss.get("round_step_index", 0))
    if not 0 <= index < n_steps:
        index = 0
        ss["round_step_index"] = 0
    return index, problem


def go_to(index: int) -> None:
    """Button callback: show step ``index``."""
    st.session_state["round_step_index"] = index


def step_by(delta: int, n_steps: int) -> None:
    """Button callback: move ``delta`` steps (quick double clicks add up), within the round."""
    index = int(st.session_state.get("round_step_index", 0)) + delta
    st.session_state["round_step_index"] = max(0, min(index, n_steps - 1))
