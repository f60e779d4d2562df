"""What a student reads for the core's names: variants and question kinds, in words.

The core (``specdec_core``) keeps names, kinds and numbers; the labels and lines the
pages show for them live here, keyed by the core's names (the rules' words in one
table, :data:`RULE_WORDS`). ``tests/ui/test_words.py``
checks that every name the core defines has its words, so a new variant or question
kind cannot ship without them. (The words of a round's statuses sit beside their
colours and symbols in :mod:`specdec_ui.kit.theme`.)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleWords:
    """What a student reads for one verification rule of ``specdec_core.rules.RULES``.

    ``label``: its entry in the Losslessness lab's menu ("Bug: ..." exactly for a
    deliberately broken rule); ``description``: what it does, and what is wrong with a
    bug; ``title``: its entry in the Variants lab's menu; for a bug the Variants lab
    offers, ``break_it`` (its checkbox), ``break_help`` and ``hidden`` (why the bug can
    leave the output law at p for some p and q). ``keep_symbol`` and ``keep_formula``: the
    name of its chance to keep a draft ("alpha", "beta"; "r" when it has none) and that
    chance as a formula; ``numbers``: what each per-position number of its whole-round step
    (``Rule.round_step``) is, by the number's symbol.
    """

    label: str
    description: str
    title: str = ""
    break_it: str = ""
    break_help: str = ""
    hidden: str = ""
    keep_symbol: str = "r"
    keep_formula: str = ""
    numbers: tuple[tuple[str, str], ...] = ()


# The one table of the rules' words, keyed by the rule's name in specdec_core.rules.RULES
# (tests/ui/test_words.py checks that every rule has its words; the order is free).
RULE_WORDS: dict[str, RuleWords] = {
    "correct": RuleWords(
        "Correct algorithm",
        "As published: keep x with probability min(1, p/q), replace the first rejected token "
        "by a sample of norm(max(0, p - q)), and draw a bonus token from p when all K are "
        "kept.",
        keep_symbol="alpha",
        keep_formula="sum min(p, q)",
    ),
    "strict": RuleWords(
        "Strict verification (exact match)",
        "As vLLM's rejection_sample_method = strict and mlx-lm do it: the target samples its "
        "own token y from p at each position and keeps the draft only if it is the same "
        "token; at the first mismatch it emits y (a bonus from p when all K match). Lossless "
        "too, but a draft is kept with beta = sum p q instead of alpha = sum min(p, q), so "
        "rounds are shorter.",
        title="Strict verification (vLLM strict, mlx-lm): keep only an exact match",
        keep_symbol="beta",
        keep_formula="sum p(x) q(x)",
    ),
    "multi_draft": RuleWords(
        "Multi-draft (SpecInfer)",
        "m candidates per position, tried in order with min(1, p_i/q); after each rejection "
        "the target shrinks to its residual norm(max(0, p_i - q)). Lossless.",
        title="Multi-draft: m candidates per position (SpecInfer)",
    ),
    "tree": RuleWords(
        "Token tree (SpecInfer, Medusa, EAGLE)",
        "A tree of drafts: each node's children are tried in order with the multi-draft "
        "rule, and the walk enters the kept child. Lossless.",
        title="Token tree (SpecInfer, Medusa, EAGLE)",
    ),
    "deterministic": RuleWords(
        "Deterministic draft (one-hot q)",
        "Prompt lookup and n-gram drafts propose one token for sure: q is one-hot, so the "
        "draft is kept with p(x), else a sample of p without x. Lossless.",
        title="Deterministic draft: prompt lookup, n-gram (one-hot q)",
    ),
    "block_verification": RuleWords(
        "Block verification (Sun et al. 2024)",
        "Decides the K drafts together (Sun et al. 2024, Block Verification Accelerates "
        "Speculative Decoding, arXiv 2403.10444): a running weight w_i = min(1, w_(i-1) "
        "p(x_i)/q(x_i)) carries what a likely draft earns to the next one; coins pick the "
        "longest prefix that may stop, then a token of the leftover max(0, w p - q) (or the "
        "bonus). Lossless, and never fewer tokens per round than token by token: a draft "
        "that is unlikely on its own can be kept when the block as a whole is fine. Its "
        "drafts are not kept independently, so the round-length law is not alpha^n (1 - "
        "alpha).",
        title="Block verification: the K drafts decided together (Sun et al. 2024)",
        numbers=(
            ("w", "weight w_i = min(1, w_(i-1) p(x_i) / q(x_i))"),
            ("h", "chance h_i that the round may stop after this draft"),
            ("u", "coin"),
        ),
    ),
    "block_unweighted_leftover": RuleWords(
        "Bug: block verification, leftover without the weight",
        "Bug: after the kept prefix, the next token comes from max(0, p - q) instead of "
        "max(0, w p - q): the weight of the kept drafts is forgotten, and the token after "
        "a kept draft leans the wrong way.",
        break_it="Break it: forget the weight in the leftover",
        break_help="Sample the token after the kept prefix from max(0, p - q), as the "
        "token-by-token rule does, instead of max(0, w p - q). The Monte Carlo test below "
        "should catch it when p/q takes two different values above 1.",
        hidden="This bug changes nothing when every token with p > q has the same ratio "
        "p/q (the leftover max(0, w p - q) is then a multiple of max(0, p - q)). Type a p "
        "and q with two different ratios above 1 to watch the test catch it.",
    ),
    "resample_from_p": RuleWords(
        "Bug: resample from p",
        "Bug: a rejected token is replaced by a sample of p instead of the residual "
        "max(0, p - q). Tokens the draft already over-proposes come out too often.",
    ),
    "accept_if_p_ge_q": RuleWords(
        "Bug: accept when p >= q",
        "Bug: keep x if and only if p(x) >= q(x), a rule some tutorials state, instead of "
        "keeping it with probability min(1, p/q).",
    ),
    "ratio_with_wrong_q": RuleWords(
        "Bug: greedy draft, softmax q in the ratio",
        "Bug: the draft proposes its top token greedily, but the ratio still uses its "
        "softmax q. The q in p/q must be the distribution the draft really sampled from.",
    ),
    "no_bonus": RuleWords(
        "Bug: no bonus token",
        "Bug: when all K drafts are kept, no bonus token is drawn. The tokens still follow "
        "p, but rounds are shorter: only the tokens-per-round law catches this one.",
    ),
    "strict_fresh_sample": RuleWords(
        "Bug: strict, a fresh sample after a mismatch",
        "Bug: strict verification that, at a mismatch, throws away the target's sample y "
        "and emits a new sample of p. That new sample can be the draft's token again, so "
        "tokens the draft proposes often come out too often.",
        keep_symbol="beta",
        keep_formula="sum p(x) q(x)",
        break_it="Break it: at a mismatch, emit a fresh sample of p instead of y",
        break_help="Throw the target's own sample y away after a mismatch and draw a new "
        "one: the emitted token then leans towards the drafts. The Monte Carlo test below "
        "should catch it.",
        hidden="This bug emits p(z) (q(z) + 1 − beta) instead of p(z), and that is p itself "
        "when q is flat on p's support (q(z) = beta for every z that p can emit), as here. "
        "Pick the preset “Strict verification keeps fewer drafts” or type a q that is not "
        "flat to watch the test catch it.",
    ),
    "multi_draft_no_residual": RuleWords(
        "Bug: multi-draft without the residual update",
        "Bug: every candidate is tried against the original p, never its residual. Later "
        "candidates are kept too often.",
        break_it="Break it: skip the residual update",
        break_help="Try every candidate against the original p: a common mistake. The Monte "
        "Carlo test below should catch it.",
    ),
    "typical_acceptance": RuleWords(
        "Typical acceptance (Medusa)",
        "Keep x iff p(x) > min(epsilon, delta exp(-H(p))), no coin, q never looked at; after "
        "the kept prefix, argmax p. Faster, NOT lossless.",
        title="Typical acceptance (Medusa): fast but lossy",
    ),
    "greedy": RuleWords(
        "Greedy match (T = 0): lossy by design",
        "Keep x iff it is the target's top token argmax p, and emit argmax p otherwise: the "
        "target's own greedy text, whatever the draft proposes. Exact against greedy "
        "decoding (temperature 0), NOT against p: lossy by design, not a bug.",
    ),
}


def rule_words(name: str) -> RuleWords:
    """The words of the rule ``name``; a rule registered without words shows its name."""
    return RULE_WORDS.get(name) or RuleWords(label=name, description="", title=name)


def rule_label(name: str) -> str:
    """The rule's entry in the Losslessness lab's menu (its name if it has no words)."""
    return rule_words(name).label


def rule_title(name: str) -> str:
    """The rule's entry in the Variants lab's menu (its label if it has no title)."""
    words = rule_words(name)
    return words.title or words.label


# specdec_core.quiz.QUESTION_KINDS: the Self-test's menu of generated questions.
QUESTION_KIND_LABELS: dict[str, str] = {
    "acceptance": "Acceptance probability of one drafted token",
    "alpha": "Acceptance rate alpha of a draft/target pair",
    "residual": "Residual (resample) probability of one token",
    "tokens_out": "Tokens out of one round",
    "expected_tokens": "Expected tokens per round",
    "multi_draft": "Multi-draft: the second candidate after a rejection",
    "tree": "Token tree: expected tokens per round",
    "deterministic": "Deterministic draft (prompt lookup): the replacement token",
    "typical_acceptance": "Typical acceptance (Medusa): how often a draft is kept",
    "block_verification": "Block verification (Sun et al. 2024): tokens per round",
}

# The worked examples (specdec_core.scenarios) by what they show: students never saw the
# project's two source documents, and "seed 000" collided with the pages' "Random seed".
EXAMPLE_TITLES: dict[str, str] = {
    "000-round": "Worked example: a full round, all three drafts kept, bonus D",
    "000-rejection": "Rejection example: B rejected, leftover [0.10, 0, 0.05, 0, 0]",
    "000-rejection-pb010": "Rejection example as first written: p(B) = 0.10, coin 0.65",
    "003-A": "All kept: p ≥ q at every position, plus the bonus",
    "003-B": "A coin fails: the round stops early",
    "003-C": "A perfect draft: p = q exactly",
    "003-D": "The target forbids the token (p = 0)",
    "003-E": "q near 0: the cap min(1, p/q) holds",
    "003-F": "Building the resample distribution",
    "003-G": "The two limits of speedup (K = 4)",
    "003-H": "A latency budget: pick K",
    "003-I": "Same top token, still rejected (ratio, not rank)",
}
# Where an example comes from, for a student: the course's two documents by what they are.
SOURCE_NAMES = {"000": "the worked round", "003": "the exercise sheet"}


def example_title(key: str) -> str:
    """A worked example's name by what it shows (the core's key, e.g. "000-round")."""
    return EXAMPLE_TITLES[key]


def example_source(source: str) -> str:
    """A scenario's source ("000, Steps 1-6") in a student's words ("the worked round,
    Steps 1-6")."""
    doc, _, where = source.partition(", ")
    name = SOURCE_NAMES.get(doc, doc)
    return f"{name}, {where}" if where else name


def example_note(note: str, source: str) -> str:
    """A scenario's note with the source documents named as :func:`example_source` does
    ("the seed" is the document of ``source``)."""
    name = SOURCE_NAMES.get(source.partition(", ")[0], "the example")
    for old, new in (
        ("seed 000", SOURCE_NAMES["000"]),
        ("seed 003", SOURCE_NAMES["003"]),
        ("The seed", "The " + name.removeprefix("the ")),
        ("the seed", name),
    ):
        note = note.replace(old, new)
    return note
