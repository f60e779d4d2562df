"""The Class page's sections: start or join a class, the teacher's projector (join code and
QR code, the asked question's answers, the class's pooled experiment, the controls) and a
student's phone (the question with a Send button, "Run 20 rounds").

Who is who: the teacher's browser holds the class's teacher key in its session
(:data:`specdec_ui.kit.class_start.TEACHER_KEY`); its address is ``?class=CODE`` and its own
link ``?class=CODE&teach=KEY`` (shown folded) gives the key back after a reload; the key is
dropped from the address bar at once, so no QR code ever carries it. A phone's address is
``?join=CODE&me=ID``: a reload starts a new Streamlit session, and the ``me`` in the link
(the store's random student id, no name) puts the phone back in its class with its answers.
Every store call is caught: a :class:`ClassroomError` is a clear message, never a traceback.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

import streamlit as st

from specdec_core.rules import RULES
from specdec_ui.classroom import asking, figures
from specdec_ui.classroom.asking import LETTERS, ROUNDS_PER_PRESS, ClassQuestion, Experiment
from specdec_ui.kit.class_start import CLASS_PARAM, TEACHER_KEY, held_class, start_class
from specdec_ui.kit.presenter import LOCAL_NOTE, chart, share_link
from specdec_ui.kit.qr import LinkTooLongError, is_local_link, qr_png
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import show_error
from specdec_ui.presets import LAB_PRESETS
from specdec_ui.runtime.classroom import ClassNotFound, ClassroomError, normalise_code, store
from specdec_ui.words import RULE_WORDS

JOIN_PARAM, ME_PARAM, TEACH_PARAM = "join", "me", "teach"
STUDENT_KEY = "class_student"  # session: {"code", "id"} of the class this phone joined
MESSAGE_KEY = "class_message"  # a control's outcome, shown on the next run
SEED_KEY, MINE_KEY = "class_seed", "class_mine"  # the phone's seed and its batches per pool
ADDED_KEY = "class_added"  # {pool name: what this phone's last press added}, kept on screen
PROJECTOR_S, PHONE_S = 1.0, 2.0  # seconds between the live panels' refreshes
QR_CLASS_WIDTH = 360  # px: the join code's QR, scanned from the back of the room
QR_CLASS_SCALE = 10


@dataclass(frozen=True)
class Seat:
    """Where this browser sits: the class's code and the teacher's key or the student id."""

    code: str
    teacher_key: str | None = None
    student: str | None = None


# ---------------------------------------------------------------------- who is who


def seat() -> Seat | None:
    """This browser's seat from the link and the session; None (and the reason shown) when
    it is in no class."""
    params = st.query_params
    try:
        if params.get(CLASS_PARAM):
            return _teacher_seat(normalise_code(params[CLASS_PARAM]))
        if params.get(JOIN_PARAM):
            return _student_seat(normalise_code(params[JOIN_PARAM]))
        if (held_class() or {}).get("code"):  # the teacher back through the page menu
            st.query_params[CLASS_PARAM] = held_class()["code"]
            return _teacher_seat(held_class()["code"])
        if (st.session_state.get(STUDENT_KEY) or {}).get("code"):  # back from another page,
            return _student_seat(st.session_state[STUDENT_KEY]["code"])  # which drops the link
    except ClassroomError as err:
        show_error(err)
        if isinstance(err, ClassNotFound) and (held_class() or {}).get("code"):
            st.session_state.pop(TEACHER_KEY, None)
        if isinstance(err, ClassNotFound) and not (
            params.get(CLASS_PARAM) or params.get(JOIN_PARAM)
        ):
            st.session_state.pop(STUDENT_KEY, None)  # an ended class: no seat to come back to
    return None


def _teacher_seat(code: str) -> Seat:
    """The teacher's seat; a ``teach`` key in the link goes into the session and leaves the
    address bar. A ``class`` link without this session's key joins as a student."""
    if key := st.query_params.get(TEACH_PARAM):
        st.session_state[TEACHER_KEY] = {"code": code, "key": key}
        del st.query_params[TEACH_PARAM]
    held = held_class()
    if not held or held["code"] != code:
        del st.query_params[CLASS_PARAM]
        st.query_params[JOIN_PARAM] = code
        st.info(
            "This browser does not hold the teacher key of this class, so it joined as a "
            "student. The teacher gets the controls back with the teacher link (🔑 on the "
            "teacher's screen).",
            icon="ℹ️",
        )
        return _student_seat(code)
    store().view(code)  # ClassNotFound for an ended or expired class
    return Seat(code, teacher_key=held["key"])


def _student_seat(code: str) -> Seat:
    """Join (or rejoin with the link's or the session's student id) and keep the id in both."""
    mine = st.session_state.get(STUDENT_KEY) or {}
    known = st.query_params.get(ME_PARAM) or (mine.get("id") if mine.get("code") == code else None)
    student = store().join(code, known)
    st.session_state[STUDENT_KEY] = {"code": code, "id": student}
    if st.query_params.get(JOIN_PARAM) != code:
        st.query_params[JOIN_PARAM] = code
    if st.query_params.get(ME_PARAM) != student:
        st.query_params[ME_PARAM] = student
    return Seat(code, student=student)


def messages() -> None:
    """The outcome of the last control pressed (kept over the rerun it caused)."""
    kind, text = st.session_state.pop(MESSAGE_KEY, (None, None))
    if kind == "error":
        show_error(text)
    elif kind == "info":
        st.info(md_escape(text), icon="ℹ️")


# ------------------------------------------------------------------- start or join


def _start() -> None:
    code = start_class()
    if code is not None:
        st.query_params.clear()
        st.query_params[CLASS_PARAM] = code


def _join() -> None:
    typed = st.session_state.get("class_code") or ""
    if not typed.strip():
        st.session_state[MESSAGE_KEY] = ("error", "Type the class code from the projector.")
        return
    try:
        typed = normalise_code(typed)
    except ClassroomError as err:  # not a code at all: its length or characters
        st.session_state[MESSAGE_KEY] = ("error", str(err))
        return
    st.query_params.clear()
    st.query_params[JOIN_PARAM] = typed


def start_or_join() -> None:
    """A teacher starts a class; a student types the code (or scans the projector's QR)."""
    teach, join = st.columns(2)
    with teach.container(border=True):
        st.header("👩‍🏫 Teach")
        st.write(
            "Start a class: the projector shows a join code and its QR code, you ask the "
            "pages' questions and the class's phones answer and run rounds."
        )
        st.button("🏫 Start a class", key="class_start", on_click=_start, type="primary")
    with join.container(border=True):
        st.header("📱 Join")
        st.write("Scan the QR code on the projector, or type the class code. No name needed.")
        st.text_input("Class code (6 letters and digits)", max_chars=12, key="class_code")
        st.button("Join the class", key="class_join", on_click=_join)


# ------------------------------------------------------------------- the projector


def join_panel(seat: Seat) -> None:
    """The join code, its link and its QR code, large (folded once a question is asked, so
    the question and its answers fill the projector; unfold it for latecomers); the
    teacher's own link folded in the sidebar, which presenter view keeps closed."""
    link = share_link({JOIN_PARAM: seat.code})
    try:
        asked = store().view(seat.code).asked is not None
    except ClassroomError:
        asked = False  # live_answers says why
    spaced = " ".join(seat.code)
    with st.expander(
        f"📱 Join code {spaced}: scan the QR code or type the code", expanded=not asked
    ):
        code_box, text = st.columns([2, 3], vertical_alignment="center")
        if link:
            try:
                png = qr_png(link, scale=QR_CLASS_SCALE)
            except LinkTooLongError as err:
                code_box.info(f"No QR code: {err}. Type the code instead.", icon="🔗")
            else:
                code_box.image(png, width=QR_CLASS_WIDTH, alt="QR code of the class's join link")
        with text:
            st.markdown(f"## Join code: **{md_escape(spaced)}**")
            st.caption("Scan the QR code, or open the Class page and type the code.")
            st.code(link or f"/Class?join={seat.code}", language=None, wrap_lines=True)
            if link and is_local_link(link):
                st.caption(LOCAL_NOTE)
    own = share_link({CLASS_PARAM: seat.code, TEACH_PARAM: seat.teacher_key or ""})
    with st.sidebar.expander("🔑 Your teacher link (keep it private)"):
        st.caption(
            "It gives this class's controls back after a reload or on another computer. "
            "Never show it: the join link and QR code carry the code only."
        )
        st.code(own or f"/Class?class={seat.code}&teach=…", language=None, wrap_lines=True)


def _act(action: str, seat: Seat, *args) -> None:
    """A teacher's control (a button's callback): the store's call, its outcome kept."""
    try:
        getattr(store(), action)(seat.code, seat.teacher_key, *args)
    except ClassroomError as err:
        st.session_state[MESSAGE_KEY] = ("error", str(err))
        return
    if action == "end":
        st.session_state.pop(TEACHER_KEY, None)
        st.query_params.clear()
        st.session_state[MESSAGE_KEY] = ("info", f"Class {seat.code} has ended.")


def _ask(seat: Seat, question_id: str) -> None:
    found = asking.find_question(question_id)
    if found is not None:
        _act("ask", seat, found.asked())
        st.session_state["class_pick_page"] = found.page.title
        st.session_state["class_pick_question"] = _short_question(found)


def _ask_picked(seat: Seat) -> None:
    title = st.session_state.get("class_pick_page")
    shown = st.session_state.get("class_pick_question")
    found = next(
        (
            c
            for c in asking.class_questions()
            if (c.page.title, _short_question(c)) == (title, shown)
        ),
        None,
    )
    if found is not None:
        _ask(seat, found.question_id)


def _ask_next(seat: Seat) -> None:
    try:
        now = store().view(seat.code).asked
    except ClassroomError as err:
        st.session_state[MESSAGE_KEY] = ("error", str(err))
        return
    _ask(seat, asking.next_question(now.question_id if now else None).question_id)


def teacher_controls(seat: Seat) -> None:
    """Pick a page and its question and ask it; reveal, next question, reset, end."""
    catalogue = asking.class_questions()
    left, right = st.columns([1, 2])
    pages = list(dict.fromkeys(c.page.title for c in catalogue))
    page = left.selectbox("Page", pages, key="class_pick_page")
    shown = [_short_question(c) for c in catalogue if c.page.title == page]
    if st.session_state.get("class_pick_question") not in shown:
        st.session_state["class_pick_question"] = shown[0]
    right.selectbox("Question", shown, key="class_pick_question")
    row = st.container(horizontal=True)
    row.button("❓ Ask", key="class_ask", on_click=_ask_picked, args=(seat,), type="primary")
    row.button("👁️ Reveal answers", key="class_reveal", on_click=_act, args=("reveal", seat))
    row.button("⏭️ Next question", key="class_next", on_click=_ask_next, args=(seat,))
    row.button("🔄 Reset answers and pools", key="class_reset", on_click=_act, args=("reset", seat))
    row.button("⏹️ End the class", key="class_end", on_click=_act, args=("end", seat))


def _short_question(found: ClassQuestion) -> str:
    """A question as the picker lists it: its number on its page and its first words."""
    text = found.question.ask
    return f"{found.index}. {text[:90]}{'…' if len(text) > 90 else ''}"


def _question_text(found: ClassQuestion, *, choices: bool = True) -> None:
    """The question (the page's own markdown) and its lettered choices or what its number
    is (a phone's answer widget says them)."""
    st.markdown(f"**{md_escape(found.page.title)}, question {found.index}:** {found.question.ask}")
    for i, choice in enumerate(found.question.choices if choices else ()):
        st.markdown(f"**{LETTERS[i]}.** {choice}")
    if found.question.number and choices:
        st.caption(f"Answer with a number: {found.question.unit}.")


@st.fragment(run_every=PROJECTOR_S)
def live_answers(seat: Seat) -> None:
    """The asked question and the count of answers; on reveal, their histogram with the
    right one marked and the worked answer (refreshes itself, not the page)."""
    try:
        now = store().view(seat.code)
    except ClassroomError as err:
        show_error(err)
        return
    ends = time.strftime("%H:%M UTC", time.gmtime(now.expires_at))
    st.caption(f"Class {now.code}: {now.students} students joined; ends by {ends}; {now.backend}.")
    found = asking.find_question(now.asked.question_id) if now.asked else None
    if found is None:
        st.info("No question asked yet: pick a page and a question below and press Ask.")
        return
    _question_text(found)
    st.metric("Answers in", f"{now.answers} of {now.students} students", border=True)
    if now.revealed:
        _revealed(seat, found)


def _revealed(seat: Seat, found: ClassQuestion) -> None:
    tally = store().tally(seat.code, found.question_id)
    q = found.question
    if q.choices:
        fig = figures.choice_answers_figure(LETTERS[: len(q.choices)], tally, q.right)
    else:
        fig = figures.number_answers_figure(tally, found.right_value, q.tolerance)
    chart(fig, key="class_answers_chart")
    st.markdown(f"**Right answer: {md_escape(found.label(found.right_value))}.** {q.answer}")


# ------------------------------------------------------------- the class's experiment


def _rule_label(rule: str) -> str:
    words = RULE_WORDS.get(rule)
    label = words.label if words else rule
    known = RULES.get(rule)
    return f"{label} (deliberately broken)" if known is not None and known.is_bug else label


def _open(seat: Seat) -> None:
    exp = Experiment(
        st.session_state["class_exp_preset"],
        int(st.session_state["class_exp_k"]),
        st.session_state["class_exp_rule"],
    )
    _act("set_pool", seat, exp.name, len(exp.p), exp.k + 1)


def experiment_controls(seat: Seat) -> None:
    """The teacher opens an experiment: a preset's p and q, K and a rule (a bug too)."""
    a, b, c = st.columns([3, 1, 3])
    a.selectbox(
        "p and q", list(LAB_PRESETS), format_func=lambda k: LAB_PRESETS[k].label,
        key="class_exp_preset",
    )  # fmt: skip
    b.selectbox("K", asking.K_CHOICES, index=asking.K_CHOICES.index(asking.DEFAULT_K),
                key="class_exp_k")  # fmt: skip
    c.selectbox("Rule", asking.experiment_rules(), format_func=_rule_label, key="class_exp_rule")
    st.button(
        "🧪 Open this experiment to the class", key="class_exp_open", on_click=_open, args=(seat,)
    )


@st.fragment(run_every=PROJECTOR_S)
def live_pool(seat: Seat) -> None:
    """The class's pooled tokens against p with the chi-square, and its tokens per round
    against E(alpha, K), with how many students and rounds (refreshes itself)."""
    try:
        exp = asking.parse_experiment(store().view(seat.code).pool_name)
        pool = store().pool(seat.code, exp.name) if exp else None
    except ClassroomError as err:
        show_error(err)
        return
    if exp is None or pool is None:
        st.info("No experiment open: pick p and q, K and a rule below and open it.")
        return
    stats = asking.pool_stats(pool, exp)
    st.markdown(
        f"**{md_escape(LAB_PRESETS[exp.preset].label)}**, K = {exp.k}, rule: "
        f"{md_escape(_rule_label(exp.rule))}. **{pool.students} students** pooled "
        f"**{pool.rounds:,} rounds**."
    )
    if stats.fit is not None:
        verdict = (
            "the class's tokens drift away from p"
            if stats.drifts
            else "no evidence against p: the tokens follow p"
        )
        st.markdown(
            f"Chi-square of the pooled tokens against p: X² = {stats.fit.statistic:.3g} "
            f"({stats.fit.dof} degrees of freedom), p-value {stats.fit.p_value:.3g}: "
            f"**{verdict}** (level {asking.SIGNIFICANCE:g})."
        )
    left, right = st.columns(2)
    with left:
        fig = figures.pool_tokens_figure(
            exp.labels, exp.p, pool.emitted or [0] * len(exp.p), stats.fit
        )
        chart(fig, key="class_pool_tokens")
    with right:
        lengths = pool.lengths or [0] * (exp.k + 2)
        chart(figures.pool_lengths_figure(lengths, exp.alpha, exp.k), key="class_pool_lengths")


# ------------------------------------------------------------------------ the phone


def _send(seat: Seat, found: ClassQuestion, value: float | None) -> bool:
    """Send this phone's answer; False (and why shown) when it was refused."""
    if value is None:
        st.warning("Choose or type an answer first, then press Send.", icon="✋")
        return False
    try:
        store().answer(seat.code, seat.student, found.question_id, value)
    except ClassroomError as err:
        show_error(err)
        return False
    return True


def _answer_widget(found: ClassQuestion) -> float | None:
    q, key = found.question, found.question_id.replace("/", "_")
    if q.choices:
        picked = st.radio(
            "Your answer", range(len(q.choices)), index=None, key=f"class_choice_{key}",
            format_func=lambda i: f"{LETTERS[i]}. {q.choices[i]}",
        )  # fmt: skip
        return None if picked is None else float(picked)
    low, high = found.span
    return st.number_input(
        f"Your answer: {q.unit} (a number from {low:g} to {high:g})",
        value=None, step=1e-6, format="%g", key=f"class_number_{key}",  # typed answers valid
    )  # fmt: skip


@st.fragment(run_every=PHONE_S)
def phone_question(seat: Seat) -> None:
    """The asked question, an answer and Send; after the reveal, the right answer and this
    phone's (refreshes itself: the teacher's next question appears)."""
    try:
        now = store().view(seat.code)
        found = asking.find_question(now.asked.question_id) if now.asked else None
        mine = store().my_answer(seat.code, seat.student, found.question_id) if found else None
    except ClassroomError as err:
        show_error(err)
        return
    st.caption(f"Class {now.code}: {now.students} students joined.")
    if found is None:
        st.info("Waiting for the teacher's question…", icon="⏳")
        return
    _question_text(found, choices=now.revealed)
    if now.revealed:
        right = found.label(found.right_value)
        said = "none" if mine is None else found.label(mine)
        mark = "" if mine is None else (" ✓ right" if found.is_right(mine) else " ✗ not right")
        st.info(f"Revealed: the right answer is {right}. Yours: {said}{mark}.", icon="👁️")
        return
    value = _answer_widget(found)
    if st.button("📨 Send", key="class_send", type="primary") and _send(seat, found, value):
        mine = value
    if mine is not None:  # kept over the panel's refreshes and a reload
        st.success(f"Sent: {found.label(mine)}. A new answer replaces it until the reveal.")


def describe(exp: Experiment) -> str:
    """An experiment in words: its p and q, K and rule (markdown-escaped)."""
    return (
        f"{md_escape(LAB_PRESETS[exp.preset].label)}, K = {exp.k}, rule: "
        f"{md_escape(_rule_label(exp.rule))}"
    )


def run_rounds(seat: Seat, exp: Experiment) -> None:
    """One press: this phone's next batch of the experiment (its own seed) into the pool,
    with what was added, or the store's refusal (ended class, too fast) said plainly."""
    seed = st.session_state.setdefault(SEED_KEY, secrets.randbelow(2**31))
    done = st.session_state.setdefault(MINE_KEY, {})
    batch = done.get(exp.name, 0)
    emitted, lengths = asking.run_batch(exp, seed, batch)
    try:
        store().add_rounds(seat.code, seat.student, exp.name, emitted, lengths)
    except ClassroomError as err:
        show_error(err)
        st.session_state.get(ADDED_KEY, {}).pop(exp.name, None)  # the refusal, not the last add
        return
    done[exp.name] = batch + 1
    st.session_state.setdefault(ADDED_KEY, {})[exp.name] = (
        f"Added {ROUNDS_PER_PRESS} rounds ({sum(emitted)} tokens: "
        + ", ".join(f"{md_escape(lab)} {n}" for lab, n in zip(exp.labels, emitted, strict=True))
        + ") to the class's pool."
    )


def last_added(exp: Experiment) -> None:
    """What this phone's last press added to ``exp``'s pool, shown until its next press (the
    panels refresh themselves every few seconds: a message of the press's run alone would
    vanish before a student has read it)."""
    added = st.session_state.get(ADDED_KEY, {}).get(exp.name)
    if added:
        st.success(added)


@st.fragment(run_every=PHONE_S)
def phone_rounds(seat: Seat) -> None:
    """The experiment the teacher opened, and "Run 20 rounds" with this phone's own seed."""
    try:
        exp = asking.parse_experiment(store().view(seat.code).pool_name)
    except ClassroomError:
        return  # phone_question says why
    if exp is None:
        return
    st.header("🧪 The class's experiment")
    st.markdown(f"{describe(exp)}.")
    if st.button(f"▶️ Run {ROUNDS_PER_PRESS} rounds", key="class_run"):
        run_rounds(seat, exp)
    last_added(exp)
    presses = st.session_state.get(MINE_KEY, {}).get(exp.name, 0)
    if presses:
        seed = st.session_state.get(SEED_KEY)
        st.caption(f"This phone added {presses * ROUNDS_PER_PRESS} rounds (seed {seed}).")
