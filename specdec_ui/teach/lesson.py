"""The 50-minute lesson path: its steps, their links and the numbers each page opens on.

Each :class:`Step` opens one page in presenter view (``present=1``) on the preset the
step's question is about, with the link parameters that page reads on a session's first
visit (each room's ``values_from_link`` / ``read_link``; ``tests/app/test_page_teach.py``
opens every link and checks the page shows its preset). The question to ask is the page's
own (:func:`specdec_ui.page_questions.questions_for`), by its index, never copied here.
No Streamlit in this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

import specdec_core as sc
from specdec_ui.page_questions import Question, questions_for
from specdec_ui.presets import (
    DEFAULT_K,
    DEFAULT_LAB_PRESET,
    DEFAULT_ROUNDS,
    DEFAULT_SPEED_PRESET,
    DEFAULT_VARIANT_PRESET,
    LAB_PRESETS,
    SPEED_PRESETS,
    VARIANT_PRESETS,
)
from specdec_ui.registry import PageInfo, available_pages, page_info

LESSON_MINUTES = 50
HOME, ROUND, SPEED = "pages/scripts/home.py", "pages/scripts/round.py", "pages/scripts/speedup.py"
LAB, QUIZ = "pages/scripts/losslessness.py", "pages/scripts/self_test.py"
PAIRS, SERVING = "pages/scripts/model_pairs.py", "pages/scripts/serving.py"
VARIANTS = "pages/scripts/variants.py"
PRESENT = {"present": "1"}
PAIR_WORDS = {"k": "K (drafts a round)", "t": "temperature T", "draft": "draft length"}


@dataclass(frozen=True)
class Step:
    """One step of the lesson: a page, its minutes, what to show, the link's settings and
    which of the page's questions to ask (None: the page has none; ``show`` says what to
    point at)."""

    page: str  # the page's script, as in specdec_ui.registry
    minutes: int
    title: str
    show: str
    params: tuple[tuple[str, str], ...] = ()
    question: int | None = 0

    @property
    def info(self) -> PageInfo:
        return page_info(self.page)

    def query(self, *, present: bool = True, simple: bool = False) -> dict[str, str]:
        """The link's parameters: the step's settings, presenter view and simple mode."""
        return {
            **dict(self.params),
            **(PRESENT if present else {}),
            **({"simple": "1"} if simple else {}),
        }

    def href(self, base: str = "./", **options: bool) -> str:
        """The step's address: ``base`` (the app's root address, ending in "/"; "./" for a
        link relative to a page of the app) + the page's address + its query."""
        query = urlencode(self.query(**options))
        return base + self.info.url_path + (f"?{query}" if query else "")

    def ask(self) -> Question | None:
        """The page's question this step asks (None where the page has none)."""
        if self.question is None:
            return None
        return questions_for(self.page)[self.question]


LESSON: tuple[Step, ...] = (
    Step(
        HOME,
        5,
        "The idea: a draft writes, the target checks",
        "The intern-and-editor story and the timeline: K drafts, one target pass, and the "
        "bonus token when all are kept.",
    ),
    Step(
        ROUND,
        8,
        "A full round, decision by decision",
        "Press Next (→ on a clicker) through every coin against min(1, p/q) to the bonus.",
        (("mode", "preset"), ("preset", "000-round"), ("step", "0")),
    ),
    Step(
        ROUND,
        7,
        "A rejection and the residual",
        "Step to the rejected B, the leftover max(0, p − q) and the token drawn from it.",
        (("mode", "preset"), ("preset", "000-rejection"), ("step", "0")),
        1,
    ),
    Step(
        SPEED,
        8,
        "How fast is it? The latency budget",
        "Move K and watch the milliseconds per token and the best K.",
        (("preset", DEFAULT_SPEED_PRESET),),
        1,
    ),
    Step(
        LAB,
        7,
        "Is it lossless? A hundred thousand rounds",
        "Emitted tokens against p and the chi-square test; then switch on “resample from p”.",
        (("preset", DEFAULT_LAB_PRESET),),
    ),
    Step(
        PAIRS,
        7,
        "Real models on this server",
        "At T = 0 the output is the target's own greedy output; compare the two clocks.",
        (("k", "3"), ("t", "0.0"), ("draft", "fixed"), ("mode", "run")),
    ),
    Step(
        SERVING,
        5,
        "When is it fast? Batch size decides",
        "At batch 1 the draft pays; follow the speedup curve to the break-even batch, where "
        "checking the drafts costs real arithmetic.",
        (("hw", "4x-h100"), ("target", "llama-3.1-70b"), ("draft", "llama-3.2-1b"), ("batch", "1")),
    ),
    Step(
        QUIZ,
        3,
        "Check yourselves",
        "Everyone answers the quick questions on their phone (the QR code in the corner).",
        (("kind", "mixed"),),
    ),
)


def _vector(values) -> str:
    return "[" + ", ".join(f"{float(x):g}" for x in values) + "]"


def page_numbers(page: str) -> tuple[tuple[str, str], ...]:
    """The numbers a page opens on, as (what, value) lines for a worksheet (from the
    presets and the core's worked examples; pages without presets: the lesson's link)."""
    if page in (HOME, ROUND):
        s = sc.SCENARIOS["000-round"]
        return (
            ("tokens", ", ".join(s.labels)),
            ("target p", _vector(s.p_rows[0])),
            ("draft q", _vector(s.q_rows[0])),
            ("K (drafts a round)", str(s.k_drafts)),
        )
    if page == SPEED:
        s = SPEED_PRESETS[DEFAULT_SPEED_PRESET]
        return (
            ("alpha", f"{s.alpha:g}"),
            ("K", str(s.k)),
            ("draft step c_q", f"{s.c_q:g} ms"),
            ("target step c_p", f"{s.c_p:g} ms"),
        )
    if page == LAB:
        s = LAB_PRESETS[DEFAULT_LAB_PRESET]
        return (
            ("tokens", ", ".join(s.labels)),
            ("target p", f"[{s.p_text}]"),
            ("draft q", f"[{s.q_text}]"),
            ("K", str(DEFAULT_K)),
            ("rounds", f"{DEFAULT_ROUNDS:,}"),
        )
    if page == VARIANTS:
        v = VARIANT_PRESETS[DEFAULT_VARIANT_PRESET]
        return (
            ("tokens", ", ".join(v.labels)),
            ("target p", f"[{v.p_text}]"),
            ("draft q", f"[{v.q_text}]"),
            ("candidates per position", str(v.m)),
        )
    if page == PAIRS:
        step = next(s for s in LESSON if s.page == PAIRS)
        return tuple((PAIR_WORDS[name], value) for name, value in step.params if name in PAIR_WORDS)
    return ()  # the Self-test: every number is in its question


def worksheet_pages() -> tuple[PageInfo, ...]:
    """The pages with questions, in the sidebar's order: one worksheet each."""
    return tuple(p for p in available_pages() if questions_for(p.path))


def root_of(page_url: str | None) -> str:
    """The app's root address ("https://host/app/") from a page's address, or "" unknown."""
    if not page_url:
        return ""
    return page_url.rsplit("/", 1)[0] + "/"
