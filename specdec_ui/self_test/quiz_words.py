"""The words of the Self-test's generated questions: the question, the worked steps and the
formula of each kind, made from the numbers :mod:`specdec_core.quiz` computed.

One function a kind, registered in :data:`QUESTION_TEXT` by ``@_words_of(kind)`` (keyed by
``quiz.QUESTION_KINDS``; a test checks that every kind has one): a new kind of question is
its builder in the core and one such function here. A function only formats: every number
it writes is one of the question's (``p_target``, ``q_draft``, ``answer``, ``numbers``).
No Streamlit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from specdec_core.quiz import QuizQuestion


@dataclass(frozen=True)
class QuestionText:
    """What a student reads for one question: plain text and one LaTeX line (no user text)."""

    prompt: str  # plain text (numbers and labels A, B, ... only)
    worked: tuple[str, ...]  # the solution, one plain-text line per step
    formula: str  # LaTeX of the key step with the numbers filled in


Words = Callable[[QuizQuestion], "QuestionText"]
# The words of each kind of question, keyed by specdec_core.quiz.QUESTION_KINDS (filled
# by :func:`_words_of` below, one function a kind).
QUESTION_TEXT: dict[str, Words] = {}


def _words_of(kind: str) -> Callable[[Words], Words]:
    """Register the decorated function as the words of questions of ``kind``."""

    def register(words: Words) -> Words:
        QUESTION_TEXT[kind] = words
        return words

    return register


def _fmt(value: float) -> str:
    """Two decimals for whole hundredths, else three."""
    return f"{value:.2f}" if abs(value * 100 - round(value * 100)) < 1e-9 else f"{value:.3f}"


def _vec(values) -> str:
    return "[" + ", ".join(_fmt(float(value)) for value in values) + "]"


def _pair(question: QuizQuestion) -> str:
    """The opening "Target p = [...], draft q = [...] over tokens A, B, ..." of most prompts."""
    return (
        f"Target p = {_vec(question.p_target)}, draft q = {_vec(question.q_draft)} over "
        f"tokens {', '.join(question.labels)}"
    )


@_words_of("acceptance")
def _acceptance(question: QuizQuestion) -> QuestionText:
    p, q, n = question.p_target, question.q_draft, question.numbers
    x = question.token
    name, a = question.labels[x], question.answer
    return QuestionText(
        prompt=f"The draft proposed token {name}. With p = {_vec(p)} (target) and "
        f"q = {_vec(q)} (draft), what is the probability that {name} is kept?",
        worked=(
            f"a({name}) = min(1, p({name}) / q({name})) "
            f"= min(1, {_fmt(p[x])} / {_fmt(q[x])}) = min(1, {n['ratio']:.3f}) = {a:.3f}.",
            "The target likes it at least as much as the draft did: it is always kept."
            if a >= 1
            else f"The target likes it less than the draft did: keep it {a:.1%} of the time.",
        ),
        formula=rf"a({name}) = \min\left(1, \frac{{{_fmt(p[x])}}}{{{_fmt(q[x])}}}\right)"
        rf" = {a:.3f}",
    )


@_words_of("alpha")
def _alpha(question: QuizQuestion) -> QuestionText:
    n, alpha = question.numbers, question.answer
    terms = " + ".join(_fmt(value) for value in n["overlap"])
    return QuestionText(
        prompt=f"{_pair(question)}. What is the acceptance rate alpha?",
        worked=(
            f"alpha = sum over x of min(p(x), q(x)) = {terms} = {alpha:.3f}.",
            f"Equivalently alpha = 1 - TV(p, q) = 1 - {n['tv']:.3f}: the overlap of the two "
            "bar charts, and the chance that one drafted token is kept.",
        ),
        formula=rf"\alpha = \sum_x \min(p(x), q(x)) = {terms} = {alpha:.3f}",
    )


@_words_of("residual")
def _residual(question: QuizQuestion) -> QuestionText:
    p, q, n = question.p_target, question.q_draft, question.numbers
    x = question.token
    name, adj, leftover = question.labels[x], question.answer, n["leftover"]
    return QuestionText(
        prompt=f"{_pair(question)}. A drafted token was rejected. With what probability is "
        f"the replacement token {name}?",
        worked=(
            f"Leftover max(0, p - q) = {_vec(leftover)}.",
            f"Its mass Z = {n['z']:.2f} (= 1 - alpha).",
            f"p_adj({name}) = {_fmt(leftover[x])} / {n['z']:.2f} = {adj:.3f}."
            + (" Tokens with p <= q get no resample mass." if leftover[x] == 0 else ""),
        ),
        formula=rf"p_{{adj}}({name}) = \frac{{\max(0, {_fmt(p[x])} - {_fmt(q[x])})}}"
        rf"{{{n['z']:.2f}}} = {adj:.3f}",
    )


@_words_of("tokens_out")
def _tokens_out(question: QuizQuestion) -> QuestionText:
    p, q, n, labels = question.p_target, question.q_draft, question.numbers, question.labels
    k, kept = n["k"], n["kept"]
    lines = []
    for i, (x, u, a) in enumerate(zip(n["drafts"], n["coins"], n["chances"], strict=True)):
        prefix = f"Position {i + 1}: {labels[x]}, a = min(1, {_fmt(p[x])}/{_fmt(q[x])}) = {a:.3f}"
        if i < len(kept):
            verdict = "kept" if kept[i] else "rejected: stop here"
            lines.append(f"{prefix}, coin {u:.2f} {'<' if u < a else '>='} {a:.3f}: {verdict}.")
        else:
            lines.append(f"{prefix}: never checked (discarded after the rejection).")
    emitted = question.answer_text
    if n["final_kind"] == "bonus":
        lines.append(f"All {k} kept, plus the free bonus token from p: {k} + 1 = {emitted}.")
    else:
        lines.append(f"{n['n_accepted']} kept + 1 resampled from max(0, p - q) = {emitted}.")
    return QuestionText(
        prompt=f"{_pair(question)}. The draft proposes K = {k} tokens "
        f"{', '.join(labels[x] for x in n['drafts'])}, and the coins come up "
        f"{', '.join(f'{c:.2f}' for c in n['coins'])} (a token is kept when its coin is below "
        "its acceptance probability). How many tokens does this round emit?",
        worked=tuple(lines),
        formula=rf"\text{{tokens}} = {n['n_accepted']}\ \text{{kept}} + 1\ "
        rf"\text{{({n['final_kind']})}} = {emitted}",
    )


@_words_of("expected_tokens")
def _expected_tokens(question: QuizQuestion) -> QuestionText:
    n, e = question.numbers, question.answer
    k, alpha = n["k"], n["alpha"]
    return QuestionText(
        prompt=f"Each draft token is kept independently with probability alpha = {alpha:.2f}, "
        f"and the draft proposes K = {k} tokens per round. How many tokens does a round "
        "emit on average?",
        worked=(
            f"E[tokens] = (1 - alpha^(K+1)) / (1 - alpha) = (1 - {alpha:.2f}^{k + 1}) / "
            f"(1 - {alpha:.2f}) = {n['numerator']:.4f} / {1 - alpha:.2f} = {e:.3f}.",
            f"It lies between 1 (nothing kept) and K + 1 = {k + 1} (everything kept, plus the "
            "bonus).",
        ),
        formula=rf"\mathbb{{E}}[\text{{tokens}}] = \frac{{1 - {alpha:.2f}^{{{k + 1}}}}}"
        rf"{{1 - {alpha:.2f}}} = {e:.3f}",
    )


@_words_of("multi_draft")
def _multi_draft(question: QuizQuestion) -> QuestionText:
    q, n, labels = question.q_draft, question.numbers, question.labels
    x1, x2, p2, a2 = n["first"], question.token, n["p2"], question.answer
    return QuestionText(
        prompt=f"{_pair(question)}. Two candidates were drafted from q for the same position: "
        f"{labels[x1]}, then {labels[x2]}. Candidate 1 ({labels[x1]}) was rejected. With what "
        f"probability is candidate 2 ({labels[x2]}) kept?",
        worked=(
            "After the rejection the target becomes the residual: max(0, p - q) = "
            f"{_vec(n['leftover'])}, mass {n['z']:.2f}, so p_2 = {_vec(p2)}.",
            f"p_2({labels[x2]}) = {_fmt(n['leftover'][x2])} / {n['z']:.2f} = {p2[x2]:.3f}.",
            f"a = min(1, p_2({labels[x2]}) / q({labels[x2]})) = min(1, {p2[x2]:.3f} / "
            f"{_fmt(q[x2])}) = {a2:.3f}. Using p instead of p_2 here is the classic bug: the "
            "output would no longer follow p.",
        ),
        formula=rf"a_2 = \min\left(1, \frac{{p_2({labels[x2]})}}{{q({labels[x2]})}}\right) = "
        rf"\min\left(1, \frac{{{p2[x2]:.3f}}}{{{_fmt(q[x2])}}}\right) = {a2:.3f}",
    )


@_words_of("tree")
def _tree(question: QuizQuestion) -> QuestionText:
    n, e = question.numbers, question.answer
    a1, a2, beta = n["alpha_1"], n["alpha_2"], n["beta"]
    return QuestionText(
        prompt=f"{_pair(question)}, the same at every depth. A token tree has two children at "
        "depth 1 (drafted i.i.d. from q) and one child under each of them. Verified node by "
        "node with the multi-draft rule (bonus token after a kept leaf), how many tokens does "
        "a round emit on average?",
        worked=(
            f"alpha_1 = sum min(p, q) = {a1:.3f}; after a rejection p_2 = {_vec(n['p2'])}, so "
            f"alpha_2 = sum min(p_2, q) = {a2:.3f}.",
            f"Depth 1 keeps one of its two children with beta_2 = 1 - (1 - {a1:.3f})(1 - "
            f"{a2:.3f}) = {beta:.3f}; depth 2 (one child) keeps it with alpha_1 = {a1:.3f}.",
            f"E[tokens] = 1 + beta_2 + beta_2 alpha_1 = 1 + {beta:.3f} + {beta:.3f} x {a1:.3f} "
            f"= {e:.3f}.",
        ),
        formula=rf"\mathbb{{E}}[\text{{tokens}}] = 1 + \beta_2 + \beta_2 \alpha = 1 + {beta:.3f}"
        rf" + {beta:.3f} \cdot {a1:.3f} = {e:.3f}",
    )


@_words_of("deterministic")
def _deterministic(question: QuizQuestion) -> QuestionText:
    p, n, labels = question.p_target, question.numbers, question.labels
    x, y, answer = n["drafted"], question.token, question.answer
    return QuestionText(
        prompt=f"Target p = {_vec(p)} over tokens {', '.join(labels)}. Prompt lookup proposes "
        f"{labels[x]} for sure (no probabilities: q is one-hot on {labels[x]}). The draft was "
        f"rejected. With what probability is the replacement token {labels[y]}?",
        worked=(
            f"With q one-hot on {labels[x]}, min(1, p/q) = p({labels[x]}) = {_fmt(p[x])}: the "
            "chance to keep it.",
            f"max(0, p - q) is p with {labels[x]} removed; its mass is 1 - {_fmt(p[x])} = "
            f"{n['rest']:.2f}.",
            f"Replacement: p({labels[y]}) / (1 - p({labels[x]})) = {_fmt(p[y])} / "
            f"{n['rest']:.2f} = {answer:.3f}. Same as sampling y ~ p and keeping the draft iff "
            f"y = {labels[x]}.",
        ),
        formula=rf"P({labels[y]} \mid \text{{rejected}}) = \frac{{{_fmt(p[y])}}}"
        rf"{{1 - {_fmt(p[x])}}} = {answer:.3f}",
    )


@_words_of("typical_acceptance")
def _typical(question: QuizQuestion) -> QuestionText:
    n, keep = question.numbers, question.answer
    h, tau, eps, delta = n["entropy"], n["tau"], n["epsilon"], n["delta"]
    passes = ", ".join(question.labels[x] for x in n["passes"])
    return QuestionText(
        prompt=f"{_pair(question)}; the entropy of p is H(p) = {h:.3f} nats. Medusa's typical "
        f"acceptance keeps a draft x iff p(x) > min(epsilon, delta exp(-H(p))), with epsilon = "
        f"{eps} and delta = {delta}. With what probability is a draft x ~ q kept?",
        worked=(
            f"tau = min({eps}, {delta} x exp(-{h:.3f})) = min({eps}, {n['scaled']:.4f}) = "
            f"{tau:.4f}.",
            "Tokens with p strictly above tau (a tie fails, as in Medusa's code): "
            f"{passes or 'none'}.",
            f"P(keep) = sum of q over them = {keep:.3f}. No coin and no q in the test: fast, "
            "but the output no longer follows p.",
        ),
        formula=rf"\tau = {tau:.4f},\quad P(\text{{keep}}) = \sum_{{x: p(x) > \tau}} q(x) = "
        rf"{keep:.3f}",
    )


@_words_of("block_verification")
def _block(question: QuizQuestion) -> QuestionText:
    n, e = question.numbers, question.answer
    s1, s2, alpha = n["s1"], n["s2"], n["alpha"]
    return QuestionText(
        prompt=f"Block verification (Sun et al. 2024) with p = {_vec(question.p_target)}, "
        f"q = {_vec(question.q_draft)} over {', '.join(question.labels)} and K = 2 drafts per "
        "round. How many tokens does a round emit on average?",
        worked=(
            "Weights: w_1 = min(1, p(x_1)/q(x_1)), w_2 = min(1, w_1 p(x_2)/q(x_2)); a round "
            "keeps at least i drafts with probability s_i = E_q[w_i] (the average over the "
            "drafts).",
            f"s_1 = sum_x q(x) min(1, p(x)/q(x)) = sum min(p, q) = alpha = {s1:.4f}.",
            f"s_2 = sum over x_1, x_2 of q(x_1) q(x_2) w_2 = {s2:.4f} (token by token it would "
            f"be alpha^2 = {alpha**2:.4f}).",
            f"E[tokens] = 1 + s_1 + s_2 = {e:.3f}, against 1 + alpha + alpha^2 = "
            f"{1 + alpha + alpha**2:.3f} token by token: the same drafts, more tokens, still p.",
        ),
        formula=rf"\mathbb{{E}}[\text{{tokens}}] = 1 + {s1:.4f} + {s2:.4f} = {e:.3f}",
    )


def question_text(question: QuizQuestion) -> QuestionText:
    """The question, worked steps and formula a student reads for ``question``."""
    return QUESTION_TEXT[question.kind](question)
