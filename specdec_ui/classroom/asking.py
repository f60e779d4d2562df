"""What a class is asked and what it pools, without Streamlit.

Questions: every "What this page asks" question that has an answer format
(:class:`specdec_ui.page_questions.Question`: multiple choice or a number with its
tolerance) becomes a :class:`ClassQuestion`, with the id, kind and range the store
(:class:`specdec_ui.runtime.classroom.Asked`) keeps. Experiments: the Losslessness lab's
presets, K and a rule of :data:`specdec_core.rules.RULES` (the correct one and the bugs of
it), named in one string the store pools under; a phone's batch of rounds is
:func:`specdec_core.simulate_rounds` with the phone's own seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

import specdec_core as sc
from specdec_core.rules import BASIC_RULE, RULES, reference_rule
from specdec_ui.page_questions import Question, questions_for
from specdec_ui.presets import LAB_PRESETS
from specdec_ui.registry import PageInfo, available_pages
from specdec_ui.runtime.classroom import Asked, Pool

LETTERS = "ABCDEFGH"
ROUNDS_PER_PRESS = 20  # "Run 20 rounds"
K_CHOICES = (1, 2, 3, 4, 5, 6)
DEFAULT_K = 4  # the Losslessness lab's default
EXPERIMENT_PAGE = "Losslessness_lab"
SIGNIFICANCE = 1e-3  # the labs' level


@dataclass(frozen=True)
class ClassQuestion:
    """One page's question as the class gets it: ``index`` counts from 1 on its page."""

    page: PageInfo
    index: int
    question: Question

    @property
    def question_id(self) -> str:
        return f"{self.page.url_path or 'Home'}/{self.index}"

    @property
    def kind(self) -> str:
        return "choice" if self.question.choices else "number"

    @property
    def right_value(self) -> float:
        """The right choice's index, or the number the core computed."""
        q = self.question
        return float(q.right) if q.choices else float(q.fact(q.number))

    @property
    def span(self) -> tuple[float, float]:
        """The numbers a phone may send: [0, 1] for a share, else 0 up to the next power of
        ten above ten times the answer (a choice: its indices)."""
        if self.question.choices:
            return 0.0, float(len(self.question.choices) - 1)
        value = abs(self.right_value)
        if value <= 1:
            return 0.0, 1.0
        return 0.0, float(10 ** (math.ceil(math.log10(value)) + 1))

    def asked(self) -> Asked:
        low, high = self.span
        return Asked(
            page=self.page.url_path,
            question_id=self.question_id,
            kind=self.kind,
            choices=len(self.question.choices),
            low=low,
            high=high,
        )

    def is_right(self, value: float) -> bool:
        return abs(value - self.right_value) <= self.question.tolerance + 1e-12

    def label(self, value: float) -> str:
        """An answer as the projector writes it: a choice's letter, or the number."""
        if self.question.choices:
            return LETTERS[int(value)]
        return f"{value:.6g}"


def askable(question: Question) -> bool:
    """Whether ``question`` has an answer format (choices or a number)."""
    return bool(question.choices) or bool(question.number)


@lru_cache(maxsize=1)
def class_questions() -> tuple[ClassQuestion, ...]:
    """Every askable question of every page, in the sidebar's order."""
    return tuple(
        ClassQuestion(page, i, q)
        for page in available_pages()
        for i, q in enumerate(questions_for(page.path), start=1)
        if askable(q)
    )


def find_question(question_id: str | None) -> ClassQuestion | None:
    return next((c for c in class_questions() if c.question_id == question_id), None)


def next_question(question_id: str | None) -> ClassQuestion:
    """The question after ``question_id`` in :func:`class_questions` (wrapping round)."""
    catalogue = class_questions()
    ids = [c.question_id for c in catalogue]
    at = ids.index(question_id) + 1 if question_id in ids else 0
    return catalogue[at % len(catalogue)]


# ---------------------------------------------------------------------------- experiments


def experiment_rules() -> tuple[str, ...]:
    """The correct rule and its deliberate bugs that take no options: all held to the same
    law, so the pool is tested against p and E(alpha, K)."""
    return tuple(
        name
        for name, rule in RULES.items()
        if not rule.options and reference_rule(name).name == BASIC_RULE
    )


@dataclass(frozen=True)
class Experiment:
    """The Losslessness lab's preset, K and rule, as the class pools them."""

    preset: str
    k: int
    rule: str

    @property
    def name(self) -> str:
        return f"{EXPERIMENT_PAGE}|preset={self.preset}|K={self.k}|rule={self.rule}"

    @property
    def p(self) -> np.ndarray:
        return np.array(sc.parse_distribution(LAB_PRESETS[self.preset].p_text, name="p"))

    @property
    def q(self) -> np.ndarray:
        return np.array(sc.parse_distribution(LAB_PRESETS[self.preset].q_text, name="q"))

    @property
    def labels(self) -> tuple[str, ...]:
        return LAB_PRESETS[self.preset].labels

    @property
    def alpha(self) -> float:
        return sc.acceptance_rate(self.p, self.q)

    @property
    def expected_tokens(self) -> float:
        return float(sc.expected_tokens(self.alpha, self.k))


def parse_experiment(name: str | None) -> Experiment | None:
    """The experiment ``name`` names, or None for a name this page did not make."""
    head, _, rest = (name or "").partition("|")
    fields = dict(part.partition("=")[::2] for part in rest.split("|"))
    try:
        exp = Experiment(fields["preset"], int(fields["K"]), fields["rule"])
    except (KeyError, ValueError):
        return None
    ok = exp.preset in LAB_PRESETS and exp.k in K_CHOICES and exp.rule in experiment_rules()
    return exp if head == EXPERIMENT_PAGE and ok else None


def run_batch(exp: Experiment, seed: int, batch: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(emitted counts per token, rounds by tokens emitted 0..K+1) of ``ROUNDS_PER_PRESS``
    rounds, the phone's ``batch``-th press with its ``seed``."""
    rng = np.random.default_rng([seed, batch])
    run = sc.simulate_rounds(exp.p, exp.q, exp.k, ROUNDS_PER_PRESS, rng=rng, variant=exp.rule)
    emitted = tuple(int(x) for x in run.emitted_counts)
    return emitted, tuple(int(x) for x in run.tokens_per_round_counts)


@dataclass(frozen=True)
class PoolStats:
    """A pool's numbers: the chi-square of its tokens against p, its mean tokens a round."""

    fit: sc.GoodnessOfFit | None  # None before any round
    mean_tokens: float | None

    @property
    def drifts(self) -> bool:
        return self.fit is not None and self.fit.p_value < SIGNIFICANCE


def pool_stats(pool: Pool, exp: Experiment) -> PoolStats:
    """The pooled tokens tested against p (:func:`specdec_core.chi_square_test`, every
    position follows p), and the pooled tokens per round."""
    if pool.rounds == 0 or len(pool.emitted) != len(exp.p):
        return PoolStats(None, None)
    lengths = np.asarray(pool.lengths, dtype=float)
    mean = float((np.arange(lengths.size) * lengths).sum() / lengths.sum())
    return PoolStats(sc.chi_square_test(np.asarray(pool.emitted), exp.p), mean)
