"""The "Step through a round" page's widgets and session state (keys prefixed ``round_``).

The pure half (typed text, links) is :mod:`specdec_ui.round.codec`; the link,
the session and the share link go through one :class:`PageState`. Session keys
besides the widgets':

- ``round_step_index``: the step on screen (the page's stepper moves it);
  ``round_sig``: the round on screen (a new round resets the step);
  ``round_link_step``: the step a link asked for;
- ``round_table``: the per-position tables (a :class:`TableState`), and
  ``round_table_shown``: what the table editors showed last (:class:`ShownTables`);
- ``round_last_valid``: the last valid round (:class:`RoundControls`), shown
  while an input is invalid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import specdec_core as sc
from specdec_core.errors import MAX_TEXT_LENGTH, mismatch_message
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import seed_control, show_error
from specdec_ui.presets import ROUND_K_MAX
from specdec_ui.round import codec, figures
from specdec_ui.round.codec import CustomInputs, RoundChoice, RowTables
from specdec_ui.round.story import RoundSpec, RoundStory, build_story, spec_from_scenario
from specdec_ui.runtime.figure_cache import shared_figure
from specdec_ui.runtime.shared_work import TEXT_TTL_S, shared_result
from specdec_ui.words import example_note, example_source, example_title

MODES = ("Preset", "Custom")
ROWS_SHARED = "One p and q for every position"
ROWS_TABLE = "A row per position (table)"
ROW_MODES = (ROWS_SHARED, ROWS_TABLE)
STATE = PageState(
    "round",
    {
        "mode": "Preset",
        "preset": codec.DEFAULT_PRESET,
        "rows": ROWS_SHARED,
        **CustomInputs().values(),
    },
)


@dataclass(frozen=True, eq=False)
class TableState:
    """The tables the editors start from; a new ``version`` gives the editors new keys."""

    tables: RowTables
    labels: tuple[str, ...]
    version: int

    @property
    def k(self) -> int:
        return int(self.tables.q_rows.shape[0])


@dataclass(frozen=True, eq=False)
class ShownTables:
    """What the table editors showed in the last run (edits included)."""

    tables: RowTables
    version: int


@dataclass(frozen=True, eq=False)
class TableUpdate:
    """New contents for the tables, and a note on why they changed ('' for none)."""

    tables: RowTables
    labels: tuple[str, ...]
    note: str


@dataclass(frozen=True, eq=False)
class RoundControls:
    """The round to show, the input error (None when the inputs are valid) and its choice."""

    spec: RoundSpec
    error: sc.SpecDecError | None
    choice: RoundChoice


# ----------------------------------------------------------------------------- link and state
def _set_table(tables: RowTables, labels: tuple[str, ...]) -> None:
    old = st.session_state.get("round_table")
    version = old.version + 1 if old is not None else 1
    copied = RowTables(np.array(tables.p_rows), np.array(tables.q_rows))
    st.session_state["round_table"] = TableState(copied, tuple(labels), version)


def _link_values(link: codec.LinkState) -> dict[str, object]:
    """The widget values a link sets (a preset link leaves the custom fields at defaults)."""
    choice = link.choice
    values: dict[str, object] = {"preset": choice.preset, "mode": "Preset"}
    if choice.custom is not None:
        values |= {"mode": "Custom", **choice.custom.values()}
        values["rows"] = ROWS_TABLE if choice.tables is not None else ROWS_SHARED
    return values


def open_state() -> None:
    """Before the widgets: read the link on the session's first run, then restore the widgets."""
    if (reader := STATE.first_visit()) is not None:
        link = codec.read_link(reader.params)
        STATE.start(_link_values(link), link.problems)
        if link.choice.tables is not None:
            n_tokens = link.choice.tables.p_rows.shape[1]
            try:
                labels = sc.parse_labels(str(link.choice.custom.labels), n_tokens)
            except sc.SpecDecError:
                labels = sc.default_labels(n_tokens)
            _set_table(link.choice.tables, labels)
        st.session_state["round_link_step"] = link.step
    STATE.restore()


def _session_inputs() -> CustomInputs:
    ss = st.session_state
    names = CustomInputs().values()
    values = {name: ss[STATE.key(name)] for name in names}
    values["k"] = codec.whole_number(values["k"])  # 2.5 stays 2.5: the core refuses it
    return CustomInputs.from_values(values)


def _edit_preset_in_custom(key: str) -> None:
    copy = codec.scenario_as_custom(key)
    STATE.set_values(
        {
            "mode": "Custom",
            **copy.inputs.values(),
            "rows": ROWS_SHARED if copy.tables is None else ROWS_TABLE,
        }
    )
    if copy.tables is not None:
        labels = tuple(lab.strip() for lab in copy.inputs.labels.split(","))
        _set_table(copy.tables, labels)
    st.session_state["round_copy_notes"] = copy.notes


# ----------------------------------------------------------------------------- preset
def _preset_label(key: str) -> str:
    return example_title(key)


def preset_controls(column) -> RoundSpec:
    """The preset picker (in ``column``), then the scenario's source, lesson and note."""
    key = column.selectbox(
        "Worked example",
        codec.ROUND_KEYS,
        key="round_preset",
        format_func=_preset_label,
        help="Every worked round of the course's worked round and exercise sheet.",
    )
    s = sc.SCENARIOS[key]
    st.info(
        f"**Lesson.** {md_escape(s.lesson)}\n\n*Source: {md_escape(example_source(s.source))}.*",
        icon="💡",
    )
    if s.note:
        lead, _, details = example_note(s.note, s.source).partition(". ")  # a plain sentence
        st.markdown(f"📝 **Note on the numbers.** {md_escape(lead.rstrip('.'))}.")
        if details:
            st.caption(md_escape(details))
    st.button(
        "✏️ Edit this example in Custom mode",
        key="round_edit_preset",
        on_click=_edit_preset_in_custom,
        args=(key,),
        help="Copies its p, q, drafts, coins and final token into the custom inputs.",
    )
    return spec_from_scenario(s)


# ----------------------------------------------------------------------------- custom
def _distribution_inputs(slots: dict) -> bool:
    """Labels, K, shared/table mode, normalise, p and q; True in table mode.

    ``slots`` gets an empty box under each field, for that field's error message.
    """
    c1, c2 = st.columns([3, 1])
    c1.text_input(
        "Vocabulary labels (separated by commas; empty = A, B, C, ...)",
        key="round_labels",
        max_chars=MAX_TEXT_LENGTH,
    )
    slots["labels"] = c1.empty()
    # No browser bounds: 0, -1 or 25 reach the core, whose message names the problem next to
    # the field (with bounds, the browser kept the bad number and showed only a tiny icon).
    # A float field (step 1.0): an int field cut a typed 2.5 to 2 without a word; now
    # 2.5 reaches the core, which refuses it by name (issue 33, item 18).
    c2.number_input(
        "K: draft tokens per round",
        step=1.0,
        format="%g",
        key="round_k",
        help=f"1 to {ROUND_K_MAX} tokens drafted ahead in a round.",
    )
    slots["k"] = c2.empty()
    c1, c2 = st.columns([3, 1])
    rows_mode = c1.radio(
        "Distributions",
        ROW_MODES,
        key="round_rows",
        horizontal=True,
        help="The worked examples use one p and q for every position; a table lets "
        "each position have its own.",
    )
    c2.checkbox(
        "Normalise",
        key="round_normalise",
        help="Divide each row of p and q by its sum. Off: p and q must sum to 1 (a "
        "typo is reported, never fixed). On: 4, 3, 2, 1 means 0.4, 0.3, 0.2, 0.1.",
    )
    table_mode = rows_mode == ROWS_TABLE
    fills = " (fills the table)" if table_mode else ""
    c1, c2 = st.columns(2)
    c1.text_input(
        "p: the target's distribution" + fills,
        key="round_p_text",
        max_chars=MAX_TEXT_LENGTH,
        help="Decimals (0.25), fractions (1/4) or percentages (25%), separated by "
        "commas or spaces; they must sum to 1.",
    )
    slots["p"] = c1.empty()
    c2.text_input(
        "q: the draft's distribution" + fills,
        key="round_q_text",
        max_chars=MAX_TEXT_LENGTH,
        help="Same syntax as p, same number of entries.",
    )
    slots["q"] = c2.empty()
    return table_mode


def _token_inputs(slots: dict) -> None:
    """Drafts, coins, the final token and the seed (each empty = drawn with the seed)."""
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
    slots |= {"drafts": c1.empty(), "coins": c2.empty(), "final": c3.empty()}
    with st.columns(3)[0]:
        seed_control("round")


def show_field_error(err: sc.SpecDecError, slots: dict) -> None:
    """The error next to the field it names (:func:`round.codec.error_field`), else in
    ``slots["other"]``, the box under the inputs."""
    with slots.get(codec.error_field(str(err)) or "other") or slots["other"]:
        show_error(err)


def custom_controls() -> tuple[RoundSpec | None, sc.SpecDecError | None, RoundChoice]:
    """The custom inputs. Returns (spec, None, choice) or (None, error, choice); an error
    is shown next to the field it names, where the student is typing."""
    for note in st.session_state.pop("round_copy_notes", ()):
        st.caption(note)
    slots: dict = {}
    table_mode = _distribution_inputs(slots)
    _token_inputs(slots)
    STATE.keep()
    inputs, tables = _session_inputs(), None
    try:
        k = sc.check_k(inputs.k, k_max=ROUND_K_MAX)
        if table_mode:
            tables = _tables(k, inputs, slots)
        spec = codec.custom_spec(inputs, tables)
        return spec, None, RoundChoice(custom=inputs, tables=tables)
    except sc.SpecDecError as err:
        slots.setdefault("other", st.empty())
        show_field_error(err, slots)
        return None, err, RoundChoice(custom=inputs, tables=tables)


# ----------------------------------------------------------------------------- tables
def _kept_rows(base: TableState, k: int, labels: tuple[str, ...]) -> TableUpdate:
    """K or the labels changed: keep the numbers on screen (new positions copy the last row)."""
    shown = st.session_state.get("round_table_shown")
    current = shown.tables if shown and shown.version == base.version else base.tables
    p_cur, q_cur = current.p_rows, current.q_rows
    p_new = np.vstack([p_cur[: k + 1]] + [p_cur[-1:]] * max(0, k + 1 - len(p_cur)))
    q_new = np.vstack([q_cur[:k]] + [q_cur[-1:]] * max(0, k - len(q_cur)))
    note = (
        "K changed: the tables keep the rows of the positions that remain; new "
        "positions copy the last row."
        if base.k != k
        else "The columns took the new labels; the numbers are kept."
    )
    return TableUpdate(RowTables(p_new, q_new), labels, note)


def _filled_rows(k: int, inputs: CustomInputs, note: str) -> TableUpdate:
    """Tables filled from the typed (shared) p and q."""
    norm = bool(inputs.normalise)
    p_one = codec.parse_rows(inputs.p_text, "p", norm)[0]
    q_one = codec.parse_rows(inputs.q_text, "q", norm)[0]
    if p_one.size != q_one.size:
        raise sc.InvalidDistributionError(mismatch_message(p_one.size, q_one.size))
    labels = sc.parse_labels(inputs.labels, p_one.size)
    return TableUpdate(RowTables(np.tile(p_one, (k + 1, 1)), np.tile(q_one, (k, 1))), labels, note)


def _table_update(
    k: int, inputs: CustomInputs, base: TableState | None, refill: bool
) -> TableUpdate | None:
    """The new table contents, or None when the tables stay as they are.

    Labels renamed or K changed: the numbers on screen are kept. First fill,
    the Refill button, or a new vocabulary size: filled from the typed p and q.
    """
    if base is None or refill:
        return _filled_rows(k, inputs, "")
    try:
        labels = sc.parse_labels(inputs.labels, base.tables.p_rows.shape[1])
    except sc.SpecDecError:  # a different number of tokens: fill from the typed p and q
        return _filled_rows(
            k,
            inputs,
            "The number of tokens changed, so the tables were filled from the typed p and q.",
        )
    if base.k == k and base.labels == labels:
        return None
    return _kept_rows(base, k, labels)


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


def _table_editors(base: TableState) -> RowTables:
    st.caption(
        "Edit any cell; each row must sum to 1. The typed p and q above fill the tables "
        "the first time, with the Refill button, or when the number of tokens changes."
    )
    c1, c2 = st.columns(2)
    with c1:
        st.markdown("**p (target), positions 1 to K + 1**")
        p_rows = _table_editor("p", base.tables.p_rows, base.labels, True, base.version)
    with c2:
        st.markdown("**q (draft), positions 1 to K**")
        q_rows = _table_editor("q", base.tables.q_rows, base.labels, False, base.version)
    shown = RowTables(p_rows, q_rows)
    st.session_state["round_table_shown"] = ShownTables(shown, base.version)
    return shown


def _tables(k: int, inputs: CustomInputs, slots: dict) -> RowTables:
    """The per-position tables (st.data_editor), one row per position.

    A bad entry elsewhere never hides the tables: they stay on screen (with
    their edits) and the error is raised after they are drawn (a table's own error
    is shown in ``slots["tables"]``, under them).
    """
    refill = st.button("↺ Refill the tables from the typed p and q", key="round_refill")
    base, error = st.session_state.get("round_table"), None
    try:
        update = _table_update(k, inputs, base, refill)
    except sc.SpecDecError as err:
        update, error = None, err
    if update is not None:
        _set_table(update.tables, update.labels)
        base = st.session_state["round_table"]
        if update.note:
            st.caption(update.note)
    if base is None:
        raise error
    shown = _table_editors(base)
    slots["tables"] = st.empty()
    if error is not None:
        raise error
    norm = bool(inputs.normalise)
    codec.parse_rows(inputs.p_text, "p", norm)  # the typed rows fill the table later: check now
    codec.parse_rows(inputs.q_text, "q", norm)
    return shown


# ----------------------------------------------------------------------------- the page's inputs
def settings_label() -> str:
    """The settings expander's label, naming the round it holds (its key keeps it open)."""
    ss = st.session_state
    if ss.get(STATE.key("mode")) == "Custom":
        return "⚙️ Round settings: your own round"
    scenario = sc.SCENARIOS.get(str(ss.get(STATE.key("preset"))))
    title = example_title(scenario.key) if scenario is not None else "choose a worked example"
    return f"⚙️ Round settings: {md_escape(title)}"


def round_controls() -> RoundControls:
    """Render the inputs; return the round to show, the input error and its choice.

    While an input is invalid the last valid round stays on screen, and the
    returned choice, which :func:`~specdec_ui.round.codec.share_params` turns
    into a link, is that of the last valid round.
    """
    c1, c2 = st.columns([1, 4])
    mode = c1.radio(
        "Round",
        MODES,
        key="round_mode",
        help="A worked example, or your own p, q and coins.",
    )
    preset = str(st.session_state["round_preset"])
    if mode == "Preset":
        spec, error, choice = preset_controls(c2), None, None
    else:
        c2.markdown(
            "**Your own round.** Type p and q (or edit them per position), K, and "
            "optionally the drafts, the coins and the final token; anything left "
            "empty is drawn with the seed."
        )
        spec, error, choice = custom_controls()
    STATE.keep()
    if spec is not None:
        shown = RoundControls(spec, None, choice or RoundChoice(preset=preset))
        st.session_state["round_last_valid"] = shown
        return shown
    fallback = RoundControls(
        spec_from_scenario(sc.SCENARIOS[codec.DEFAULT_PRESET]), None, RoundChoice()
    )
    last = st.session_state.get("round_last_valid", fallback)
    return RoundControls(last.spec, error, last.choice)


# ----------------------------------------------------------------------------- the step
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


@dataclass(frozen=True)
class SharedRound:
    """A round's story and trace table, built once and shared read-only by every session."""

    signature: str
    story: RoundStory
    trace: pd.DataFrame


def shared_round(spec: RoundSpec) -> SharedRound:
    """:func:`round.story.build_story` of ``spec`` and its trace table, once per round.

    A class stepping through the same preset builds it once (keys hold typed numbers,
    so they expire like typed text, :data:`runtime.shared_work.TEXT_TTL_S`).
    """
    signature = spec.signature()

    def build() -> SharedRound:
        story = build_story(spec)
        return SharedRound(signature, story, story.trace_frame())

    return shared_result("round.story", signature, build, heavy=False, ttl_s=TEXT_TTL_S)


def shared_step_figures(shared: SharedRound, index: int) -> tuple:
    """(main chart, coin chart or None, chips chart) of step ``index``, built once per
    round and step and shared (``kit.presenter.chart`` draws a restyled copy, never changes
    them; the round's signature holds typed numbers, so the key is ``typed``)."""

    def build() -> tuple:
        story = shared.story
        step = story.step(index)
        main_fig, coin_fig = figures.step_figures(story, index)
        chips = figures.chips_figure(
            story.labels, story.result.draft_tokens, step.draft_status, step.emitted
        )
        return main_fig, coin_fig, chips

    return shared_figure("round.step", (shared.signature, index), build, typed=True)
