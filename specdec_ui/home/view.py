"""The Home page's sections, top to bottom (``pages/scripts/home.py`` calls them).

The idea in plain words, the timeline of seed 000's round, the algorithm in five lines
with the two numbers to remember, a card per page (from :mod:`specdec_ui.registry`), the
share link and the sources.
"""

from __future__ import annotations

import streamlit as st

import specdec_core as sc
from specdec_ui.kit.class_start import class_button
from specdec_ui.kit.presenter import chart, share_page
from specdec_ui.page_questions import questions_box, questions_for
from specdec_ui.registry import PAGES, available_pages
from specdec_ui.runtime.figure_cache import shared_figure
from specdec_ui.speedup import figures as speedup_figures

TITLE = "🎯 Speculative Decoding Lab"
IDEA = (
    "A large language model writes one token per step, and each step reads all of its weights "
    "from memory: slow. **Speculative decoding** lets a small, fast **draft** model q guess the "
    "next K tokens, then the large **target** model p checks all K guesses in **one** pass. "
    "Guesses the target agrees with are kept; the first one it disagrees with is replaced and "
    "the rest are thrown away. A clever coin flip makes the result follow p **exactly**: the "
    "output is as good as the target's own, only faster."
)
INTERN = (
    "Think of the draft as an **intern** and the target as an **editor**. The intern quickly "
    "writes a few words; the editor reads them all at once, keeps the words she would have "
    "written herself (or keeps a word with a probability that corrects for how much the intern "
    "over-used it), crosses out the first one she does not accept and writes her own word "
    "there. If she accepts them all, she adds one more word of her own for free."
)
# Seed 000's round: K = 3 drafts, all kept, plus the bonus D: 4 tokens for one target pass.
TIMELINE = {"k": 3, "c_q": 1.0, "c_p": 4.0}
TIMELINE_CAPTION = (
    "The draft proposes, the target verifies once. "
    "The worked round: the draft proposes A, B, C (three cheap steps), and one target pass "
    "checks them and adds the bonus token D. Four tokens for the price of one target step plus "
    "three draft steps, instead of four target steps."
)
ALGORITHM = r"""
1. The draft samples K tokens $x_1, \dots, x_K$, each $x_i \sim q_i$.
2. The target scores all K positions, plus one more, in a single pass: $p_1, \dots, p_{K+1}$.
3. For $i = 1, \dots, K$: keep $x_i$ if a uniform coin $u_i < \min(1, p_i(x_i) / q_i(x_i))$;
   stop at the first rejection.
4. On a rejection at position $i$, emit a sample of the leftover
   $\operatorname{norm}(\max(0, p_i - q_i))$ instead.
5. If all K were kept, emit a free bonus token sampled from $p_{K+1}$.
"""
SEED_000_ALPHA = 0.85  # sum_x min(p, q) of seed 000's p and q
SOURCES = (
    "Sources: Leviathan, Kalman & Matias, Fast Inference from Transformers via Speculative "
    "Decoding (ICML 2023); Chen et al., Accelerating Large Language Model Decoding with "
    "Speculative Sampling (2023); the course's worked round and exercise sheet. Notation: "
    "p = target, q = draft, as in Leviathan et al. (Chen et al. swap the letters)."
)


def idea() -> None:
    """The title, the idea in plain words, the intern-and-editor picture and the questions
    for the class (folded)."""
    st.title(TITLE)
    st.write(IDEA)
    st.info(INTERN, icon="🧑‍🎓")
    questions_box(questions_for("pages/scripts/home.py"))


TEACH_PAGE = "pages/scripts/teach.py"


def teach_line() -> None:
    """ "Teaching tomorrow? Start here": the Teach page (lesson path, worksheets)."""
    st.page_link(
        TEACH_PAGE,
        label="Teaching tomorrow? Start here: a 50-minute lesson path and worksheets",
        icon="🎓",
    )


def timeline() -> None:
    """Seed 000's round on a time axis: three draft steps and one target pass."""
    key = tuple(TIMELINE.values())
    fig = shared_figure("home.timeline", key, lambda: speedup_figures.timeline_figure(**TIMELINE))
    chart(fig, key="home_timeline")
    st.caption(TIMELINE_CAPTION)


def algorithm_and_numbers() -> None:
    """The algorithm in five lines beside alpha and E[tokens per round]."""
    left, right = st.columns([3, 2])
    with left:
        st.header("The algorithm in five lines")
        st.markdown(ALGORITHM)
    with right:
        st.header("Two numbers to remember")
        st.latex(
            r"\begin{aligned}\alpha &= \sum_x \min\big(p(x), q(x)\big)\\ &= 1 - \mathrm{TV}(p, q)"
            r"\end{aligned}"
        )
        st.write(
            "alpha is the chance that one drafted token is kept: how much the draft and the "
            "target overlap."
        )
        st.latex(r"\mathbb{E}[\text{tokens per round}] = \frac{1 - \alpha^{K+1}}{1 - \alpha}")
        e = sc.expected_tokens(SEED_000_ALPHA, TIMELINE["k"])
        st.write(
            f"With the worked round's p and q, alpha = {SEED_000_ALPHA}, so with K = 3 a round "
            "emits on "
            f"average {e:.2f} tokens for one target pass."
        )


def cards() -> None:
    """A card per page with its blurb, in the sidebar's order."""
    st.header("Where to go next")
    pages = [page for page in available_pages() if not page.is_home]
    # Row by row, in the sidebar's order: read left to right, top to bottom, and on a phone
    # (where columns stack) top to bottom, the cards come in the same order as the sidebar.
    for start in range(0, len(pages), 2):
        for column, page in zip(st.columns(2), pages[start : start + 2], strict=False):
            with column.container(border=True):
                st.page_link(page.path, label=page.title, icon=page.icon)
                st.write(page.blurb)
    missing = len(PAGES) - 1 - len(pages)
    if missing:
        st.caption(f"{missing} more page(s) are on the way.")


def start_a_class() -> None:
    """ "🏫 Start a class" (issue 34): a class session on the Class page, for the projector."""
    st.header("Teach with the whole class")
    st.write(
        "Start a class: the projector shows a join code and its QR code, the phones answer "
        "the pages' questions and pool their rounds, and the class sees the answers and "
        "whether its tokens follow p."
    )
    class_button(st.container(), key="class_home")


def share_and_sources() -> None:
    """The app's link (and its QR code) and the papers behind the page."""
    st.header("Share this page")
    share_page()
    st.caption(SOURCES)
