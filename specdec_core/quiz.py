"""Fresh numeric self-test questions with worked answers, from a seeded rng.

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

The answers come from the engine's own functions, so a question can never
disagree with the rest of the app. Pure numpy; nothing here draws from a
global random state.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    """One generated question: the prompt, the exact answer and the worked steps."""

    kind: str
    prompt: str  # plain text (numbers and labels A, B, ... only)
    answer: float
    worked: tuple[str, ...]  # the solution, one plain-text line per step
    labels: tuple[str, ...]
    p_target: tuple[float, ...]  # (V,)
    q_draft: tuple[float, ...]  # (V,)
    formula: str = ""  # LaTeX of the key step with the numbers filled in (no user text)
    token: int | None = None  # the token the question is about, if any
    integer: bool = False  # True when the answer is a whole number of tokens

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


def _fmt(value: float) -> str:
    """Two decimals for whole hundredths, else three."""
    return f"{value:.2f}" if abs(value * 100 - round(value * 100)) < 1e-9 else f"{value:.3f}"


def _vec(values: np.ndarray) -> str:
    return "[" + ", ".join(_fmt(float(value)) for value in values) + "]"


def _question(
    kind: str, labels, p, q, *, prompt, answer, worked, formula, token=None, integer=False
) -> QuizQuestion:
    """A :class:`QuizQuestion` over tokens ``labels`` with target p and draft q (V,)."""
    return QuizQuestion(
        kind=kind,
        prompt=prompt,
        answer=float(answer),
        worked=tuple(worked),
        labels=tuple(labels),
        p_target=tuple(float(x) for x in p),
        q_draft=tuple(float(x) for x in q),
        formula=formula,
        token=token,
        integer=integer,
    )


def _acceptance(rng, labels, p, q):
    x = int(rng.integers(len(labels)))
    a = acceptance_probability(p[x], q[x])
    ratio = p[x] / q[x]
    prompt = (
        f"The draft proposed token {labels[x]}. With p = {_vec(p)} (target) and "
        f"q = {_vec(q)} (draft), what is the probability that {labels[x]} is kept?"
    )
    worked = (
        f"a({labels[x]}) = min(1, p({labels[x]}) / q({labels[x]})) "
        f"= min(1, {_fmt(p[x])} / {_fmt(q[x])}) = min(1, {ratio:.3f}) = {a:.3f}.",
        "The target likes it at least as much as the draft did: it is always kept."
        if a >= 1
        else f"The target likes it less than the draft did: keep it {a:.1%} of the time.",
    )
    formula = (
        rf"a({labels[x]}) = \min\left(1, \frac{{{_fmt(p[x])}}}{{{_fmt(q[x])}}}\right)"
        rf" = {a:.3f}"
    )
    return _question(
        "acceptance", labels, p, q, prompt=prompt, answer=a, worked=worked, formula=formula, token=x
    )


def _alpha(rng, labels, p, q):
    overlap = np.minimum(p, q)
    alpha = acceptance_rate(p, q)
    prompt = (
        f"Target p = {_vec(p)}, draft q = {_vec(q)} over tokens {', '.join(labels)}. "
        "What is the acceptance rate alpha?"
    )
    worked = (
        f"alpha = sum over x of min(p(x), q(x)) = {' + '.join(_fmt(value) for value in overlap)} "
        f"= {alpha:.3f}.",
        f"Equivalently alpha = 1 - TV(p, q) = 1 - {1 - alpha:.3f}: the overlap of the two bar "
        "charts, and the chance that one drafted token is kept.",
    )
    formula = (
        rf"\alpha = \sum_x \min(p(x), q(x)) = {' + '.join(_fmt(value) for value in overlap)}"
        rf" = {alpha:.3f}"
    )
    return _question(
        "alpha", labels, p, q, prompt=prompt, answer=alpha, worked=worked, formula=formula
    )


def _residual(rng, labels, p, q):
    leftover = np.maximum(0.0, p - q)  # (V,)
    z = float(leftover.sum())
    x = int(rng.choice(np.arange(len(labels))))
    adj = residual_distribution(p, q)
    prompt = (
        f"Target p = {_vec(p)}, draft q = {_vec(q)} over tokens {', '.join(labels)}. "
        f"A drafted token was rejected. With what probability is the replacement "
        f"token {labels[x]}?"
    )
    worked = (
        f"Leftover max(0, p - q) = {_vec(leftover)}.",
        f"Its mass Z = {z:.2f} (= 1 - alpha).",
        f"p_adj({labels[x]}) = {_fmt(leftover[x])} / {z:.2f} = {adj[x]:.3f}."
        + (" Tokens with p <= q get no resample mass." if leftover[x] == 0 else ""),
    )
    formula = (
        rf"p_{{adj}}({labels[x]}) = \frac{{\max(0, {_fmt(p[x])} - {_fmt(q[x])})}}"
        rf"{{{z:.2f}}} = {adj[x]:.3f}"
    )
    return _question(
        "residual",
        labels,
        p,
        q,
        prompt=prompt,
        answer=adj[x],
        worked=worked,
        formula=formula,
        token=x,
    )


def _tokens_out(rng, labels, p, q):
    k = int(rng.integers(2, 5))
    drafts = tuple(int(token) for token in rng.choice(len(labels), size=k, p=q))  # x_i ~ q
    coins = tuple(float(c) for c in np.round(rng.uniform(0.01, 0.99, size=k), 2))
    p_rows, q_rows = np.tile(p, (k + 1, 1)), np.tile(q, (k, 1))
    result = verify_round(p_rows, q_rows, drafts, uniforms=coins, rng=rng)
    lines = []
    for i, (x, u) in enumerate(zip(drafts, coins, strict=True)):
        a = acceptance_probability(p[x], q[x])
        prefix = f"Position {i + 1}: {labels[x]}, a = min(1, {_fmt(p[x])}/{_fmt(q[x])}) = {a:.3f}"
        if i < len(result.steps):
            verdict = "kept" if result.steps[i].accepted else "rejected: stop here"
            lines.append(f"{prefix}, coin {u:.2f} {'<' if u < a else '>='} {a:.3f}: {verdict}.")
        else:
            lines.append(f"{prefix}: never checked (discarded after the rejection).")
    if result.final_kind == "bonus":
        lines.append(f"All {k} kept, plus the free bonus token from p: {k} + 1 = {k + 1}.")
    else:
        lines.append(
            f"{result.n_accepted} kept + 1 resampled from max(0, p - q) = {result.n_emitted}."
        )
    prompt = (
        f"Target p = {_vec(p)}, draft q = {_vec(q)} over tokens {', '.join(labels)}. "
        f"The draft proposes K = {k} tokens {', '.join(labels[x] for x in drafts)}, "
        f"and the coins come up {', '.join(f'{c:.2f}' for c in coins)} (a token is kept "
        "when its coin is below its acceptance probability). How many tokens does this "
        "round emit?"
    )
    formula = (
        rf"\text{{tokens}} = {result.n_accepted}\ \text{{kept}} + 1\ "
        rf"\text{{({result.final_kind})}} = {result.n_emitted}"
    )
    return _question(
        "tokens_out",
        labels,
        p,
        q,
        prompt=prompt,
        answer=result.n_emitted,
        worked=lines,
        formula=formula,
        integer=True,
    )


def _expected_tokens(rng, labels, p, q):
    k = int(rng.integers(1, 9))
    alpha = float(rng.integers(1, 20)) / 20.0  # 0.05 .. 0.95
    e = expected_tokens(alpha, k)
    prompt = (
        f"Each draft token is kept independently with probability alpha = {alpha:.2f}, "
        f"and the draft proposes K = {k} tokens per round. How many tokens does a round "
        "emit on average?"
    )
    worked = (
        f"E[tokens] = (1 - alpha^(K+1)) / (1 - alpha) = (1 - {alpha:.2f}^{k + 1}) / "
        f"(1 - {alpha:.2f}) = {1 - alpha ** (k + 1):.4f} / {1 - alpha:.2f} = {e:.3f}.",
        f"It lies between 1 (nothing kept) and K + 1 = {k + 1} (everything kept, plus the bonus).",
    )
    formula = (
        rf"\mathbb{{E}}[\text{{tokens}}] = \frac{{1 - {alpha:.2f}^{{{k + 1}}}}}"
        rf"{{1 - {alpha:.2f}}} = {e:.3f}"
    )
    return _question(
        "expected_tokens", labels, p, q, prompt=prompt, answer=e, worked=worked, formula=formula
    )


def _multi_draft(rng, labels, p, q):
    over = np.flatnonzero(q > p)  # a candidate the draft over-rates can be rejected
    x1 = int(rng.choice(over))
    x2 = int(rng.integers(len(labels)))
    leftover = np.maximum(0.0, p - q)  # (V,)
    z = float(leftover.sum())
    p2 = residual_distribution(p, q)
    a2 = float(acceptance_probability(p2[x2], q[x2]))
    prompt = (
        f"Target p = {_vec(p)}, draft q = {_vec(q)} over tokens {', '.join(labels)}. Two "
        f"candidates were drafted from q for the same position: {labels[x1]}, then "
        f"{labels[x2]}. Candidate 1 ({labels[x1]}) was rejected. With what probability is "
        f"candidate 2 ({labels[x2]}) kept?"
    )
    worked = (
        f"After the rejection the target becomes the residual: max(0, p - q) = {_vec(leftover)}, "
        f"mass {z:.2f}, so p_2 = {_vec(p2)}.",
        f"p_2({labels[x2]}) = {_fmt(leftover[x2])} / {z:.2f} = {p2[x2]:.3f}.",
        f"a = min(1, p_2({labels[x2]}) / q({labels[x2]})) = min(1, {p2[x2]:.3f} / "
        f"{_fmt(q[x2])}) = {a2:.3f}. Using p instead of p_2 here is the classic bug: the "
        "output would no longer follow p.",
    )
    formula = (
        rf"a_2 = \min\left(1, \frac{{p_2({labels[x2]})}}{{q({labels[x2]})}}\right) = "
        rf"\min\left(1, \frac{{{p2[x2]:.3f}}}{{{_fmt(q[x2])}}}\right) = {a2:.3f}"
    )
    return _question(
        "multi_draft",
        labels,
        p,
        q,
        prompt=prompt,
        answer=a2,
        worked=worked,
        formula=formula,
        token=x2,
    )


def _tree(rng, labels, p, q):
    a1, a2 = (float(a) for a in chain_alphas(p, q, 2))
    beta = 1.0 - (1.0 - a1) * (1.0 - a2)
    e = tree_expected_tokens(p, q, (2, 1))
    p2 = residual_distribution(p, q)
    prompt = (
        f"Target p = {_vec(p)}, draft q = {_vec(q)} over tokens {', '.join(labels)}, the same "
        "at every depth. A token tree has two children at depth 1 (drafted i.i.d. from q) and "
        "one child under each of them. Verified node by node with the multi-draft rule (bonus "
        "token after a kept leaf), how many tokens does a round emit on average?"
    )
    worked = (
        f"alpha_1 = sum min(p, q) = {a1:.3f}; after a rejection p_2 = {_vec(p2)}, so "
        f"alpha_2 = sum min(p_2, q) = {a2:.3f}.",
        f"Depth 1 keeps one of its two children with beta_2 = 1 - (1 - {a1:.3f})(1 - {a2:.3f}) "
        f"= {beta:.3f}; depth 2 (one child) keeps it with alpha_1 = {a1:.3f}.",
        f"E[tokens] = 1 + beta_2 + beta_2 alpha_1 = 1 + {beta:.3f} + {beta:.3f} x {a1:.3f} "
        f"= {e:.3f}.",
    )
    formula = (
        rf"\mathbb{{E}}[\text{{tokens}}] = 1 + \beta_2 + \beta_2 \alpha = 1 + {beta:.3f} + "
        rf"{beta:.3f} \cdot {a1:.3f} = {e:.3f}"
    )
    return _question("tree", labels, p, q, prompt=prompt, answer=e, worked=worked, formula=formula)


def _deterministic(rng, labels, p, q):
    x, y = (int(token) for token in rng.choice(len(labels), size=2, replace=False))
    rule = onehot_general_rule(p, x)
    prompt = (
        f"Target p = {_vec(p)} over tokens {', '.join(labels)}. Prompt lookup proposes "
        f"{labels[x]} for sure (no probabilities: q is one-hot on {labels[x]}). The draft was "
        f"rejected. With what probability is the replacement token {labels[y]}?"
    )
    worked = (
        f"With q one-hot on {labels[x]}, min(1, p/q) = p({labels[x]}) = {_fmt(p[x])}: the "
        f"chance to keep it.",
        f"max(0, p - q) is p with {labels[x]} removed; its mass is 1 - {_fmt(p[x])} = "
        f"{1 - p[x]:.2f}.",
        f"Replacement: p({labels[y]}) / (1 - p({labels[x]})) = {_fmt(p[y])} / {1 - p[x]:.2f} = "
        f"{rule.replacement[y]:.3f}. Same as sampling y ~ p and keeping the draft iff y = "
        f"{labels[x]}.",
    )
    formula = (
        rf"P({labels[y]} \mid \text{{rejected}}) = \frac{{{_fmt(p[y])}}}{{1 - {_fmt(p[x])}}}"
        rf" = {rule.replacement[y]:.3f}"
    )
    q_hot = one_hot(len(labels), x)
    return _question(
        "deterministic",
        labels,
        p,
        q_hot,
        prompt=prompt,
        answer=rule.replacement[y],
        worked=worked,
        formula=formula,
        token=y,
    )


def _typical(rng, labels, p, q):
    h = entropy(p)
    tau = typical_threshold(p)
    keep = typical_keep_rate(p, q)
    passes = [label for label, p_x in zip(labels, p, strict=True) if p_x > tau]
    prompt = (
        f"Target p = {_vec(p)}, draft q = {_vec(q)} over tokens {', '.join(labels)}; the "
        f"entropy of p is H(p) = {h:.3f} nats. Medusa's typical acceptance keeps a draft x iff "
        f"p(x) > min(epsilon, delta exp(-H(p))), with epsilon = {MEDUSA_EPSILON} and delta = "
        f"{MEDUSA_DELTA}. With what probability is a draft x ~ q kept?"
    )
    worked = (
        f"tau = min({MEDUSA_EPSILON}, {MEDUSA_DELTA} x exp(-{h:.3f})) = min({MEDUSA_EPSILON}, "
        f"{MEDUSA_DELTA * np.exp(-h):.4f}) = {tau:.4f}.",
        f"Tokens with p strictly above tau (a tie fails, as in Medusa's code): "
        f"{', '.join(passes) or 'none'}.",
        f"P(keep) = sum of q over them = {keep:.3f}. No coin and no q in the test: fast, but the "
        "output no longer follows p.",
    )
    formula = (
        rf"\tau = {tau:.4f},\quad P(\text{{keep}}) = \sum_{{x: p(x) > \tau}} q(x) = {keep:.3f}"
    )
    return _question(
        "typical_acceptance",
        labels,
        p,
        q,
        prompt=prompt,
        answer=keep,
        worked=worked,
        formula=formula,
    )


def _block(rng, labels, p, q):
    """Block verification at K = 2 (Sun et al. 2024): tokens per round from the exact law
    P(first i kept) = E_q[w_i], against the token-by-token 1 + alpha + alpha^2."""
    from .rules.block import expected_block, survival

    s = survival(np.tile(p, (3, 1)), np.tile(q, (2, 1)))  # (3,) 1, s_1, s_2
    alpha, e = acceptance_rate(p, q), expected_block(p, q, 2)
    prompt = (
        f"Block verification (Sun et al. 2024) with p = {_vec(p)}, q = {_vec(q)} over "
        f"{', '.join(labels)} and K = 2 drafts per round. How many tokens does a round emit "
        "on average?"
    )
    worked = (
        "Weights: w_1 = min(1, p(x_1)/q(x_1)), w_2 = min(1, w_1 p(x_2)/q(x_2)); a round keeps "
        "at least i drafts with probability s_i = E_q[w_i] (the average over the drafts).",
        f"s_1 = sum_x q(x) min(1, p(x)/q(x)) = sum min(p, q) = alpha = {s[1]:.4f}.",
        f"s_2 = sum over x_1, x_2 of q(x_1) q(x_2) w_2 = {s[2]:.4f} (token by token it would "
        f"be alpha^2 = {alpha**2:.4f}).",
        f"E[tokens] = 1 + s_1 + s_2 = {e:.3f}, against 1 + alpha + alpha^2 = "
        f"{1 + alpha + alpha**2:.3f} token by token: the same drafts, more tokens, still p.",
    )
    formula = rf"\mathbb{{E}}[	ext{{tokens}}] = 1 + {s[1]:.4f} + {s[2]:.4f} = {e:.3f}"
    return _question(
        "block_verification", labels, p, q, prompt=prompt, answer=e, worked=worked, formula=formula
    )


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
