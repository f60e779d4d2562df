"""Every worked example of the two seed documents, as data.

Seed 000: "Speculative Decoding: Fast LLM Inference Without Quality Loss, Worked
Example: Step-by-Step Round". Seed 003: "Worked examples, Speculative
decoding", cells A to I. A round scenario holds full p/q rows, the drafted
tokens, the coins and the final token, so that ``verify_round`` replays it
exactly; ``expected`` holds the seed's own numbers, which the tests assert.
Where a seed only gives the probabilities of the drafted tokens, the other
entries are filled in (documented in ``note``) so every row is a valid
distribution that reproduces the seed's numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class RoundScenario:
    """A replayable round: rows (K+1, V) and (K, V), drafts, coins, final token."""

    key: str
    title: str
    source: str  # where in the seeds, e.g. "003, Ex 6"
    cell: str  # seed 003's scenario-matrix cell, or "" for seed 000
    lesson: str  # the one-line point of the example
    labels: tuple[str, ...]
    p_rows: tuple[tuple[float, ...], ...]  # (K+1, V) target
    q_rows: tuple[tuple[float, ...], ...]  # (K, V) draft
    draft_tokens: tuple[int, ...]
    coins: tuple[float, ...]
    final_token: int
    expected: dict = field(default_factory=dict)
    note: str = ""
    kind: str = "round"

    @property
    def k_drafts(self) -> int:
        """K, the number of drafted tokens in the scenario."""
        return len(self.draft_tokens)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(p_rows (K+1, V), q_rows (K, V)) as float64 arrays."""
        return np.array(self.p_rows, dtype=np.float64), np.array(self.q_rows, dtype=np.float64)


@dataclass(frozen=True)
class TheoryScenario:
    """A closed-form example: alpha, K values and costs, with the seed's answers."""

    key: str
    title: str
    source: str
    cell: str
    lesson: str
    alpha: float
    k_values: tuple[int, ...]
    c_q: float
    c_p: float
    expected: dict = field(default_factory=dict)
    note: str = ""
    kind: str = "theory"


_P000 = (0.40, 0.25, 0.20, 0.10, 0.05)
_Q000 = (0.30, 0.30, 0.15, 0.15, 0.10)
_ABCDE = ("A", "B", "C", "D", "E")

SCENARIOS: dict[str, RoundScenario | TheoryScenario] = {
    s.key: s
    for s in (
        RoundScenario(
            key="000-round",
            title="Seed 000: a full round, all three drafts kept, bonus D",
            source="000, Steps 1-6",
            cell="",
            lesson="When the target likes a draft at least as much as the draft did, it is kept "
            "for sure; all K kept means one free bonus token.",
            labels=_ABCDE,
            p_rows=(_P000,) * 4,
            q_rows=(_Q000,) * 3,
            draft_tokens=(0, 1, 2),
            coins=(0.50, 0.72, 0.90),
            final_token=3,
            expected={
                "acceptance_probabilities": (1.0, 0.833, 1.0),
                "n_accepted": 3,
                "emitted": ("A", "B", "C", "D"),
                "final_kind": "bonus",
            },
            note="The seed gives only the coin for B (0.72); A and C have acceptance "
            "probability 1, so any coin keeps them (we use 0.50 and 0.90).",
        ),
        RoundScenario(
            key="000-rejection",
            title="Seed 000: rejection of B, residual [0.10, 0, 0.05, 0, 0]",
            source="000, Rejection scenario",
            cell="",
            lesson="A rejected token is replaced by a sample of the normalised leftover "
            "max(0, p - q); everything drafted after it is thrown away.",
            labels=_ABCDE,
            p_rows=(_P000,) * 4,
            q_rows=(_Q000,) * 3,
            draft_tokens=(0, 1, 2),
            coins=(0.50, 0.90, 0.30),
            final_token=0,
            expected={
                "acceptance_probabilities": (1.0, 0.833),
                "n_accepted": 1,
                "residual_unnormalised": (0.10, 0.0, 0.05, 0.0, 0.0),
                "residual": (0.67, 0.0, 0.33, 0.0, 0.0),
                "emitted": ("A", "A"),
                "final_kind": "resample",
            },
            note="The seed's numbers for B do not fit together, so this preset uses a coin of "
            "0.90 to reject B. In detail: seed 000 is inconsistent here: it sets p(B) = 0.10 "
            "(so alpha(B) = 0.333 and "
            "its coin 0.65 rejects) but computes the residual from p = [0.40, 0.25, 0.20, 0.10, "
            "0.05], where p(B) = 0.25. No pair of distributions gives both: with q(B) = 0.30 "
            "and p(B) = 0.10 the residual mass 1 - alpha is at least 0.20, but the seed's "
            "residual has mass 0.15. This preset keeps the seed's p and q, so the residual "
            "[0.10, 0, 0.05, 0, 0] -> [2/3, 0, 1/3, 0, 0] is exact; alpha(B) is then 0.833, "
            "so a coin of 0.90 (above 0.833) is needed to reject B. The next preset keeps "
            "p(B) = 0.10 and the coin 0.65 instead.",
        ),
        RoundScenario(
            key="000-rejection-pb010",
            title="Seed 000: rejection of B with p(B) = 0.10 and coin 0.65",
            source="000, Rejection scenario (as stated)",
            cell="",
            lesson="alpha(B) = min(1, 0.10 / 0.30) = 0.333: a coin of 0.65 rejects B.",
            labels=_ABCDE,
            p_rows=(_P000, (0.40, 0.10, 0.20, 0.20, 0.10), _P000, _P000),
            q_rows=(_Q000,) * 3,
            draft_tokens=(0, 1, 2),
            coins=(0.50, 0.65, 0.30),
            final_token=0,
            expected={
                "acceptance_probabilities": (1.0, 0.333),
                "n_accepted": 1,
                "residual_unnormalised": (0.10, 0.0, 0.05, 0.05, 0.0),
                "residual": (0.50, 0.0, 0.25, 0.25, 0.0),
                "emitted": ("A", "A"),
                "final_kind": "resample",
            },
            note="The seed fixes only p(B) = 0.10 at this position. Its other entries here are "
            "our choice, p = [0.40, 0.10, 0.20, 0.20, 0.10], which keeps p(A) and p(C) as in "
            "the seed; the residual is then [0.10, 0, 0.05, 0.05, 0] -> [0.5, 0, 0.25, 0.25, 0], "
            "not the seed's [0.67, 0, 0.33, 0, 0] (see the previous preset).",
        ),
        RoundScenario(
            key="003-A",
            title="Cell A: p >= q at every position, all kept, plus the bonus",
            source="003, Ex 1",
            cell="A",
            lesson="p >= q everywhere: every draft is kept and the bonus gives K + 1 = 4 tokens.",
            labels=("The", "cat", "sat", "down"),
            p_rows=(
                (0.70, 0.10, 0.10, 0.10),
                (0.05, 0.90, 0.03, 0.02),
                (0.20, 0.10, 0.40, 0.30),
                (0.10, 0.10, 0.20, 0.60),
            ),
            q_rows=((0.60, 0.20, 0.10, 0.10), (0.20, 0.50, 0.20, 0.10), (0.20, 0.20, 0.40, 0.20)),
            draft_tokens=(0, 1, 2),
            coins=(0.30, 0.80, 0.99),
            final_token=3,
            expected={
                "ratios": (0.7 / 0.6, 0.9 / 0.5, 1.0),
                "acceptance_probabilities": (1.0, 1.0, 1.0),
                "n_accepted": 3,
                "n_emitted": 4,
                "final_kind": "bonus",
            },
            note="The seed gives (p, q) of the drafted tokens: (0.7, 0.6), (0.9, 0.5), (0.4, 0.4); "
            "the other entries and the bonus row are our choice.",
        ),
        RoundScenario(
            key="003-B",
            title="Cell B: a biased coin fails, the round stops early",
            source="003, Ex 2",
            cell="B",
            lesson="After the first rejection the later drafts are discarded, even an attractive "
            "one (p = 0.9): they were written for a context that no longer exists.",
            labels=("Hello", "world", ",", "again", "!"),
            p_rows=(
                (0.80, 0.05, 0.05, 0.05, 0.05),
                (0.10, 0.60, 0.10, 0.10, 0.10),
                (0.05, 0.05, 0.20, 0.10, 0.60),
                (0.02, 0.02, 0.02, 0.90, 0.04),
                (0.20, 0.20, 0.20, 0.20, 0.20),
            ),
            q_rows=(
                (0.70, 0.10, 0.10, 0.05, 0.05),
                (0.10, 0.50, 0.20, 0.10, 0.10),
                (0.10, 0.10, 0.40, 0.30, 0.10),
                (0.10, 0.10, 0.10, 0.60, 0.10),
            ),
            draft_tokens=(0, 1, 2, 3),
            coins=(0.40, 0.60, 0.80, 0.10),
            final_token=4,
            expected={
                "acceptance_probabilities": (1.0, 1.0, 0.5),
                "n_accepted": 2,
                "n_emitted": 3,
                "discarded_p": 0.9,
                "final_kind": "resample",
            },
            note="The seed gives (p, q) = (0.8, 0.7), (0.6, 0.5), (0.2, 0.4) and p = 0.9 at t+3, "
            "and says only that the coin fails; we use 0.80 > 0.5 and fill the other entries.",
        ),
        RoundScenario(
            key="003-C",
            title="Cell C: p = q exactly, a perfect draft",
            source="003, Ex 3",
            cell="C",
            lesson="A perfect draft has alpha = 1: every round emits K + 1 = 6 tokens. The "
            "residual has zero mass; a rejection cannot happen.",
            labels=("A", "B", "C", "D"),
            p_rows=((0.40, 0.30, 0.20, 0.10),) * 6,
            q_rows=((0.40, 0.30, 0.20, 0.10),) * 5,
            draft_tokens=(0, 1, 0, 2, 3),
            coins=(0.10, 0.95, 0.50, 0.70, 0.30),
            final_token=0,
            expected={"alpha": 1.0, "expected_tokens": 6.0, "n_emitted": 6, "final_kind": "bonus"},
            note="K = 5, as the seed's answer (6 tokens) implies; the vector p = q is our choice.",
        ),
        RoundScenario(
            key="003-D",
            title="Cell D: the target forbids the token (p = 0)",
            source="003, Ex 4",
            cell="D",
            lesson="p(x) = 0 gives acceptance probability 0: always rejected, and the residual "
            "gives it no mass either, so it is fully purged.",
            labels=("yes", "no", "maybe", "spam"),  # not "never": "reject never" misreads
            p_rows=((0.50, 0.30, 0.20, 0.00),) * 3,
            q_rows=((0.20, 0.20, 0.20, 0.40),) * 2,
            draft_tokens=(3, 0),
            coins=(0.01, 0.50),
            final_token=0,
            expected={
                "acceptance_probabilities": (0.0,),
                "n_accepted": 0,
                "residual_unnormalised": (0.30, 0.10, 0.0, 0.0),
                "residual": (0.75, 0.25, 0.0, 0.0),
                "final_kind": "resample",
            },
            note="The seed gives p = 0, q = 0.4 for the drafted token; the rest is our choice.",
        ),
        RoundScenario(
            key="003-E",
            title="Cell E: q -> 0, the cap min(1, p/q) holds",
            source="003, Ex 5",
            cell="E",
            lesson="p/q = 0.8/0.01 = 80, but the acceptance probability is capped at 1.",
            labels=("cat", "dog", "cow"),
            p_rows=((0.80, 0.10, 0.10), (0.30, 0.30, 0.40)),
            q_rows=((0.01, 0.49, 0.50),),
            draft_tokens=(0,),
            coins=(0.999,),
            final_token=1,
            expected={
                "ratios": (80.0,),
                "acceptance_probabilities": (1.0,),
                "n_accepted": 1,
                "final_kind": "bonus",
            },
            note="The seed gives p = 0.8, q = 0.01 for the drafted token; the rest is our choice.",
        ),
        RoundScenario(
            key="003-F",
            title="Cell F: building the resample distribution",
            source="003, Ex 6",
            cell="F",
            lesson="Only tokens the target wants more than the draft offered get resample mass: "
            "max(0, p - q) = (0.4, 0, 0), normalised (1, 0, 0).",
            labels=("A", "B", "C"),
            p_rows=((0.50, 0.20, 0.30),) * 2,
            q_rows=((0.10, 0.60, 0.30),),
            draft_tokens=(1,),
            coins=(0.50,),
            final_token=0,
            expected={
                "differences": (0.4, -0.4, 0.0),
                "residual_unnormalised": (0.4, 0.0, 0.0),
                "residual_mass": 0.4,
                "residual": (1.0, 0.0, 0.0),
                "n_accepted": 0,
                "final_kind": "resample",
            },
            note="The seed does not say which token was drafted or the coin; B (the token it "
            "replaces) with a coin of 0.50 > 1/3 is our choice.",
        ),
        TheoryScenario(
            key="003-G",
            title="Cell G: the two limits of speedup (K = 4)",
            source="003, Ex 7",
            cell="G",
            lesson="Speedup runs from 1 (alpha -> 0) up to K + 1 = 5 (alpha -> 1, free draft).",
            alpha=1.0,
            k_values=(4,),
            c_q=0.0,
            c_p=10.0,
            expected={
                "speedup_alpha_1": 5.0,
                "speedup_alpha_0": 1.0,
                "expected_tokens_alpha_1": 5.0,
                "expected_tokens_alpha_0": 1.0,
            },
        ),
        TheoryScenario(
            key="003-H",
            title="Cell H: a latency budget, pick K",
            source="003, Ex 8",
            cell="H",
            lesson="Bigger K is not always better: K = 4 wins at about 21.6 ms per token, 1.85x "
            "faster than the target alone (40 ms).",
            alpha=0.7,
            k_values=(2, 4, 8),
            c_q=5.0,
            c_p=40.0,
            expected={
                "cost_ms": (50.0, 60.0, 80.0),
                "expected_tokens": (2.19, 2.7731, 3.1988),
                "ms_per_token": (22.83, 21.64, 25.01),
                "best_k": 4,
                "speedup": 1.85,
            },
        ),
        RoundScenario(
            key="003-I",
            title="Cell I: same top token, still rejected (ratio, not rank)",
            source="003, Ex 9",
            cell="I",
            lesson="Both models rank Paris first, yet it is kept only 44% of the time: acceptance "
            "depends on the ratio p/q, never on rank.",
            labels=("Paris", "London", "Rome"),
            p_rows=((0.40, 0.35, 0.25),) * 2,
            q_rows=((0.90, 0.05, 0.05),),
            draft_tokens=(0,),
            coins=(0.60,),
            final_token=1,
            expected={
                "acceptance_probabilities": (0.444,),
                "residual_unnormalised": (0.0, 0.30, 0.20),
                "residual": (0.0, 0.6, 0.4),
                "n_accepted": 0,
                "final_kind": "resample",
            },
            note="The seed gives p = 0.4, q = 0.9 for the top token; the rest is our choice.",
        ),
    )
}

_TABLE4_COLUMNS = ("task", "draft", "temperature", "k", "alpha", "c", "expected", "measured")
# Leviathan et al. 2023, Table 4 (Appendix A.3): the rows of their Table 2 (Sec. 4.1: T5-XXL
# target with T5 v1.1 drafts on one TPU v4, batch 1; gamma, alpha and the measured speed)
# with c from profiler traces and the speed Thm 3.8 expects ("expected", on unrounded inputs).
PUBLISHED_SPEEDUPS: tuple[dict, ...] = tuple(
    dict(zip(_TABLE4_COLUMNS, row, strict=True))
    for row in (
        ("EnDe", "T5-small", 0, 7, 0.75, 0.02, 3.2, 3.4),
        ("EnDe", "T5-base", 0, 7, 0.80, 0.04, 3.3, 2.8),
        ("EnDe", "T5-large", 0, 7, 0.82, 0.11, 2.5, 1.7),
        ("EnDe", "T5-small", 1, 7, 0.62, 0.02, 2.3, 2.6),
        ("EnDe", "T5-base", 1, 5, 0.68, 0.04, 2.4, 2.4),
        ("EnDe", "T5-large", 1, 3, 0.71, 0.11, 2.0, 1.4),
        ("CNNDM", "T5-small", 0, 5, 0.65, 0.02, 2.4, 3.1),
        ("CNNDM", "T5-base", 0, 5, 0.73, 0.04, 2.6, 3.0),
        ("CNNDM", "T5-large", 0, 3, 0.74, 0.11, 2.0, 2.2),
        ("CNNDM", "T5-small", 1, 5, 0.53, 0.02, 1.9, 2.3),
        ("CNNDM", "T5-base", 1, 3, 0.55, 0.04, 1.8, 2.2),
        ("CNNDM", "T5-large", 1, 3, 0.56, 0.11, 1.6, 1.7),
    )
)

# Seed 003, "Recall Quick self-test": question, answer.
SELF_TEST: tuple[tuple[str, str], ...] = (
    (
        "What is the acceptance probability a when p = 0.3 and q = 0.2?",
        "min(1, 0.3/0.2) = min(1, 1.5) = 1: always accept.",
    ),
    (
        "The draft's K tokens are all accepted. How many tokens come out of the round?",
        "K + 1: the K drafts plus the bonus token from the target.",
    ),
    ("How much resample mass does a token with p < q get?", "0, because max(0, p - q) = 0."),
    ("As alpha -> 0, what is the speedup?", "c_p / (K c_q + c_p) <= 1: no gain."),
)
