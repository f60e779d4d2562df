"""Fresh numeric self-test questions as numbers, from a seeded rng.

Each question draws a small target p and draft q in whole hundredths (so a
student can do the arithmetic by hand) and asks one of:

- ``acceptance``: a(x) = min(1, p(x) / q(x)) for one drafted token x
  (Leviathan et al. 2023, Algorithm 1; seed 000 Step 3);
- ``alpha``: alpha = sum_x min(p(x), q(x)) = 1 - TV(p, q)
  (Leviathan et al. 2023, Thm 3.5 / Cor 3.6);
- ``residual``: p_adj(x) = max(0, p(x) - q(x)) / sum_y max(0, p(y) - q(y))
  for one token x (seed 003 Ex 6);
- ``tokens_out``: K drafts, their acceptance probabilities and coins; how
  many tokens does the round emit? (n kept before the first rejection + 1;
  K + 1 with the bonus; seed 003 Ex 1 and Ex 2);
- ``expected_tokens``: E[tokens per round] = (1 - alpha^(K+1)) / (1 - alpha)
  (Leviathan et al. 2023, Eq. 1; seed 003 Ex 8);
- ``multi_draft``: candidate 1 was rejected; the chance that candidate 2 is
  kept against the residual p_2 = norm(max(0, p - q)) (SpecInfer, Miao et al. 2024);
- ``tree``: E[tokens per round] of a tree of widths (2, 1):
  1 + beta_2 + beta_2 alpha, beta_2 = 1 - (1 - alpha_1)(1 - alpha_2) (SpecInfer);
- ``deterministic``: prompt lookup's one-hot draft x is rejected; the chance
  that token y replaces it, p(y) / (1 - p(x)) (variants note, section 2);
- ``typical_acceptance``: with H(p) given, the chance that Medusa's typical
  acceptance keeps a draft x ~ q: sum_x q(x) [p(x) > min(epsilon, delta exp(-H))]
  (Cai et al. 2024).

The answers and the numbers of the worked answers come from the engine's own
functions, so a question can never disagree with the rest of the app. A question is
its kind and numbers; its words (the question, the worked steps, the formula) are
the Self-test room's (``specdec_ui.self_test.quiz_words``). Pure numpy; nothing here
draws from a global random state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .distributions import check_k, default_labels, parse_number
from .errors import InvalidParameterError, SpecDecError
from .sampling import acceptance_probability, acceptance_rate, residual_distribution, verify_round
from .theory import expected_tokens
from .variants import (
    MEDUSA_DELTA,
    MEDUSA_EPSILON,
    chain_alphas,
    entropy,
    one_hot,
    onehot_general_rule,
    typical_keep_rate,
    typical_threshold,
)
from .variants_tree import tree_expected_tokens

QUESTION_KINDS: tuple[str, ...] = (  # the kinds of generated question, in menu order
    "acceptance",
    "alpha",
    "residual",
    "tokens_out",
    "expected_tokens",
    "multi_draft",
    "tree",
    "deterministic",
    "typical_acceptance",
    "block_verification",
)
# Multiple-choice options for seed 003's "Quick self-test" (SELF_TEST, same order):
# (options, index of the correct one). The seed's own answer is the worked answer.
SEED_CHOICES: tuple[tuple[tuple[str, ...], int], ...] = (
    (("0.67", "1", "1.5", "0.1"), 1),
    (("K - 1", "K", "K + 1", "2K"), 2),
    (("0", "q - p", "p", "p / q"), 0),
    (
        (
            "It tends to K + 1",
            "It tends to 0",
            "It tends to c_p / (K c_q + c_p), at most 1: no gain",
            "It grows without limit",
        ),
        2,
    ),
)
MIN_VOCAB, MAX_VOCAB_QUIZ = 2, 8
ANSWER_TOLERANCE = 0.006  # |typed - exact| allowed: a two-decimal answer passes
MAX_ANSWER_LENGTH = 40


@dataclass(frozen=True)
class QuizQuestion:
    """One generated question as numbers: its kind, p and q, the exact answer and the
    numbers of its worked answer (``numbers``, named per kind, each computed here by the
    engine's functions). The words a student reads for it (the question, the worked
    steps, the formula) are made from these by ``specdec_ui.self_test.quiz_words``."""

    kind: str
    answer: float
    labels: tuple[str, ...]
    p_target: tuple[float, ...]  # (V,)
    q_draft: tuple[float, ...]  # (V,)
    token: int | None = None  # the token the question is about, if any
    integer: bool = False  # True when the answer is a whole number of tokens
    numbers: dict[str, object] = field(default_factory=dict, hash=False)  # per kind, below

    @property
    def answer_text(self) -> str:
        """The answer as shown to a student: a whole number or 3 decimals."""
        return f"{self.answer:.0f}" if self.integer else f"{self.answer:.3f}"


def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError(
            f"rng must be a numpy.random.Generator, got {type(rng).__name__}."
        )
    return rng


def _check_vocab(v: object) -> int:
    return check_k(v, k_min=MIN_VOCAB, k_max=MAX_VOCAB_QUIZ, name="vocabulary size")


def random_hundredths(rng: np.random.Generator, v: int) -> np.ndarray:
    """A random distribution over ``v`` tokens in whole hundredths, each >= 0.01.

    Cuts 0..100 at ``v - 1`` distinct points: the gaps are the entries, so
    they sum to exactly 100 hundredths. Returns float64 (V,).
    """
    rng = _check_rng(rng)
    v = _check_vocab(v)
    cuts = np.sort(rng.choice(np.arange(1, 100), size=v - 1, replace=False))  # (V-1,)
    hundredths = np.diff(np.concatenate([[0], cuts, [100]]))  # (V,)
    return hundredths / 100.0


def random_pair(rng: np.random.Generator, v: int) -> tuple[np.ndarray, np.ndarray]:
    """A target p and a draft q in whole hundredths (each >= 0.01) that differ.

    p comes from :func:`random_hundredths`; q moves 10 to 40 hundredths of p
    from some tokens (the draft under-rates them) to the others (it
    over-rates them), so alpha = sum_x min(p, q) = 1 - (moved mass) usually
    lies between 0.60 and 0.90, like a draft that mostly agrees.
    """
    rng = _check_rng(rng)
    v = _check_vocab(v)
    p_target = random_hundredths(rng, v)
    q_units = np.rint(p_target * 100).astype(np.int64)  # (V,) hundredths
    order = rng.permutation(v)
    n_donors = int(rng.integers(1, v))  # 1..V-1 tokens the draft under-rates
    donors, receivers = order[:n_donors], order[n_donors:]
    for _ in range(int(rng.integers(10, 41))):
        can_give = donors[q_units[donors] > 1]
        if can_give.size == 0:
            break
        q_units[int(rng.choice(can_give))] -= 1
        q_units[int(rng.choice(receivers))] += 1
    if np.array_equal(q_units, np.rint(p_target * 100)):  # no donor could give: force one move
        src = int(np.argmax(q_units))
        q_units[src] -= 1
        q_units[(src + 1) % v] += 1
    q_draft = q_units / 100.0
    return p_target, q_draft


def _floats(values) -> tuple[float, ...]:
    return tuple(float(value) for value in values)


def _question(kind: str, labels, p, q, *, answer, token=None, integer=False, **numbers):
    """A :class:`QuizQuestion` over tokens ``labels`` with target p and draft q (V,);
    ``numbers`` are the worked answer's numbers (floats, ints, tuples: comparable)."""
    return QuizQuestion(
        kind=kind,
        answer=float(answer),
        labels=tuple(labels),
        p_target=_floats(p),
        q_draft=_floats(q),
        token=token,
        integer=integer,
        numbers=numbers,
    )


# Each builder draws what its question needs and returns it as numbers; its docstring
# names its ``numbers`` (besides p, q, token and answer).
def _acceptance(rng, labels, p, q):
    """a(x) = min(1, p(x)/q(x)) for one drafted x; ``ratio`` = p(x)/q(x)."""
    x = int(rng.integers(len(labels)))
    a = acceptance_probability(p[x], q[x])
    return _question("acceptance", labels, p, q, answer=a, token=x, ratio=float(p[x] / q[x]))


def _alpha(rng, labels, p, q):
    """alpha = sum min(p, q); ``overlap`` = min(p, q) (V,), ``tv`` = 1 - alpha."""
    alpha = acceptance_rate(p, q)
    overlap = _floats(np.minimum(p, q))
    return _question("alpha", labels, p, q, answer=alpha, overlap=overlap, tv=1.0 - alpha)


def _residual(rng, labels, p, q):
    """p_adj(x) for one x; ``leftover`` = max(0, p - q) (V,), ``z`` = its mass."""
    leftover = np.maximum(0.0, p - q)  # (V,)
    x = int(rng.choice(np.arange(len(labels))))
    adj = residual_distribution(p, q)
    return _question(
        "residual",
        labels,
        p,
        q,
        answer=adj[x],
        token=x,
        leftover=_floats(leftover),
        z=float(leftover.sum()),
    )


def _tokens_out(rng, labels, p, q):
    """Tokens out of one round: ``k`` drafts ``drafts`` with ``coins`` and keep chances
    ``chances`` (K,); ``kept`` per checked position (True kept, False the rejection),
    ``n_accepted`` and ``final_kind`` ("bonus" or "resample")."""
    k = int(rng.integers(2, 5))
    drafts = tuple(int(token) for token in rng.choice(len(labels), size=k, p=q))  # x_i ~ q
    coins = _floats(np.round(rng.uniform(0.01, 0.99, size=k), 2))
    p_rows, q_rows = np.tile(p, (k + 1, 1)), np.tile(q, (k, 1))
    result = verify_round(p_rows, q_rows, drafts, uniforms=coins, rng=rng)
    return _question(
        "tokens_out",
        labels,
        p,
        q,
        answer=result.n_emitted,
        integer=True,
        k=k,
        drafts=drafts,
        coins=coins,
        chances=tuple(float(acceptance_probability(p[x], q[x])) for x in drafts),
        kept=tuple(bool(step.accepted) for step in result.steps),
        n_accepted=int(result.n_accepted),
        final_kind=result.final_kind,
    )


def _expected_tokens(rng, labels, p, q):
    """E[tokens] at ``alpha`` and ``k``; ``numerator`` = 1 - alpha^(K+1)."""
    k = int(rng.integers(1, 9))
    alpha = float(rng.integers(1, 20)) / 20.0  # 0.05 .. 0.95
    e = expected_tokens(alpha, k)
    return _question(
        "expected_tokens",
        labels,
        p,
        q,
        answer=e,
        k=k,
        alpha=alpha,
        numerator=1.0 - alpha ** (k + 1),
    )


def _multi_draft(rng, labels, p, q):
    """Candidate ``first`` rejected, candidate 2 (``token``) tried against the residual
    ``p2`` (V,); ``leftover`` = max(0, p - q) (V,), ``z`` = its mass."""
    over = np.flatnonzero(q > p)  # a candidate the draft over-rates can be rejected
    x1 = int(rng.choice(over))
    x2 = int(rng.integers(len(labels)))
    leftover = np.maximum(0.0, p - q)  # (V,)
    p2 = residual_distribution(p, q)
    a2 = float(acceptance_probability(p2[x2], q[x2]))
    return _question(
        "multi_draft",
        labels,
        p,
        q,
        answer=a2,
        token=x2,
        first=x1,
        leftover=_floats(leftover),
        z=float(leftover.sum()),
        p2=_floats(p2),
    )


def _tree(rng, labels, p, q):
    """E[tokens] of the (2, 1) tree: ``alpha_1``, ``alpha_2`` (against ``p2`` (V,), the
    residual) and ``beta`` = 1 - (1 - alpha_1)(1 - alpha_2)."""
    a1, a2 = (float(a) for a in chain_alphas(p, q, 2))
    return _question(
        "tree",
        labels,
        p,
        q,
        answer=tree_expected_tokens(p, q, (2, 1)),
        alpha_1=a1,
        alpha_2=a2,
        beta=1.0 - (1.0 - a1) * (1.0 - a2),
        p2=_floats(residual_distribution(p, q)),
    )


def _deterministic(rng, labels, p, q):
    """Prompt lookup drafted ``drafted`` (q one-hot on it) and was rejected: the chance
    that ``token`` replaces it; ``rest`` = 1 - p(drafted)."""
    x, y = (int(token) for token in rng.choice(len(labels), size=2, replace=False))
    rule = onehot_general_rule(p, x)
    return _question(
        "deterministic",
        labels,
        p,
        one_hot(len(labels), x),
        answer=rule.replacement[y],
        token=y,
        drafted=x,
        rest=float(1.0 - p[x]),
    )


def _typical(rng, labels, p, q):
    """Medusa's keep chance: ``entropy`` H(p) in nats, ``epsilon``, ``delta``,
    ``scaled`` = delta exp(-H), ``tau`` = min(epsilon, scaled), ``passes`` (the tokens
    with p above tau)."""
    h = entropy(p)
    tau = typical_threshold(p)
    return _question(
        "typical_acceptance",
        labels,
        p,
        q,
        answer=typical_keep_rate(p, q),
        entropy=float(h),
        epsilon=MEDUSA_EPSILON,
        delta=MEDUSA_DELTA,
        scaled=float(MEDUSA_DELTA * np.exp(-h)),
        tau=float(tau),
        passes=tuple(int(x) for x in np.flatnonzero(p > tau)),
    )


def _block(rng, labels, p, q):
    """Block verification at K = 2 (Sun et al. 2024): tokens per round from the exact law
    P(first i kept) = E_q[w_i] (``s1``, ``s2``), against the token-by-token 1 + alpha +
    alpha^2 (``alpha``)."""
    from .rules.block import expected_block, survival

    s = survival(np.tile(p, (3, 1)), np.tile(q, (2, 1)))  # (3,) 1, s_1, s_2
    return _question(
        "block_verification",
        labels,
        p,
        q,
        answer=expected_block(p, q, 2),
        s1=float(s[1]),
        s2=float(s[2]),
        alpha=float(acceptance_rate(p, q)),
    )


# A kind of question is its builder here (in QUESTION_KINDS too) and its words in
# specdec_ui.self_test.quiz_words.QUESTION_TEXT (and its menu label in words.py).
_BUILDERS = {
    "acceptance": _acceptance,
    "alpha": _alpha,
    "residual": _residual,
    "tokens_out": _tokens_out,
    "expected_tokens": _expected_tokens,
    "multi_draft": _multi_draft,
    "tree": _tree,
    "deterministic": _deterministic,
    "typical_acceptance": _typical,
    "block_verification": _block,
}


def make_question(kind: str, rng: np.random.Generator, *, v: int = 4) -> QuizQuestion:
    """A fresh question of ``kind`` (one of ``QUESTION_KINDS``) over ``v`` tokens.

    The same seed gives the same question. p and q are drawn by
    :func:`random_pair`; the answer is computed by the engine's functions.
    """
    if kind not in QUESTION_KINDS:
        raise InvalidParameterError(
            f"question kind {kind!r} is unknown; choose one of {', '.join(QUESTION_KINDS)}."
        )
    rng = _check_rng(rng)
    v = _check_vocab(v)
    p_target, q_draft = random_pair(rng, v)
    return _BUILDERS[kind](rng, default_labels(v), p_target, q_draft)


def check_answer(question: QuizQuestion, text: str) -> bool:
    """True when the typed answer matches: |typed - answer| <= ``ANSWER_TOLERANCE``.

    Accepts a decimal, a fraction or a percentage (``0.83``, ``5/6``, ``83%``);
    a whole-number question needs the exact count. Raises
    ``InvalidParameterError`` naming the problem when the text is not a number.
    """
    if not isinstance(text, str):
        raise InvalidParameterError(f"answer must be text, got {type(text).__name__}.")
    body = text.strip()
    if not body:
        raise InvalidParameterError("answer: is empty; type a number such as 0.75, 3/4 or 75%.")
    if len(body) > MAX_ANSWER_LENGTH:
        raise InvalidParameterError(
            f"answer: is {len(body)} characters long; at most {MAX_ANSWER_LENGTH} are allowed."
        )
    try:
        value = parse_number(body, entry=None, name="answer")  # one number: no "entry 1"
    except SpecDecError as err:
        raise InvalidParameterError(str(err)) from None
    if question.integer:
        return value == question.answer
    return abs(value - question.answer) <= ANSWER_TOLERANCE


__all__ = [
    "ANSWER_TOLERANCE",
    "QUESTION_KINDS",
    "QuizQuestion",
    "check_answer",
    "make_question",
    "random_hundredths",
    "random_pair",
    "SEED_CHOICES",
]
