"""How the Variants lab shows each rule: one :class:`Variant` row per rule, in :data:`VARIANTS`.

What a rule IS comes from the core's one registry, :data:`specdec_core.rules.RULES`: its
kind (exact, lossy by design, a bug of a named rule), its emitted law, its Monte Carlo
(tables and chunk), its expected tokens and its source. Its words come from
:data:`specdec_ui.words.RULE_WORDS`. A row here adds only what the page draws for it:
which inputs it has, how to draw one stepped example and what each decision shows
(figure and words), its options from the inputs, the basic rule it is compared with and
the figure that compares it across settings. The page (:mod:`specdec_ui.variants.view`)
never asks which rule it shows: it reads the row, and a rule registered without a row
gets :func:`generic_row`, built from the rule's properties (a rule with ``round_step`` is
stepped a whole round at a time; every such rule is compared with the token-by-token rule
across K).

The menu (:func:`menu`) is every rule the registry offers this lab that is not a bug, in
the order of :data:`VARIANTS` (then the others); a rule's bug (:func:`bug_of`) is its
"Break it" checkbox.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

import specdec_core as sc
from specdec_core import rules
from specdec_core import variants as vr
from specdec_core import variants_tree as vt
from specdec_core.rules import RULES, RuleKind
from specdec_ui.variants import figures
from specdec_ui.variants.limits import VARIANT_K_MAX
from specdec_ui.words import rule_title, rule_words

LAB = "variants"  # the lab's name in a rule's ``labs``


@dataclass(frozen=True)
class Inputs:
    """The parsed inputs of one Variants-lab run (p and q valid and of one size)."""

    variant: str
    p_target: np.ndarray  # (V,)
    q_draft: np.ndarray  # (V,) one-hot on ``token`` for the deterministic draft
    labels: tuple[str, ...]
    m: int  # candidates per position (multi-draft)
    widths: tuple[int, ...] | None  # children per level (tree)
    token: int  # the drafted token (deterministic draft)
    k: int  # positions per round in the Monte Carlo (not the tree's: its depth)
    epsilon: float  # typical acceptance
    delta: float
    broken: bool  # the variant's bug switched on
    seed: int
    rounds: int

    @property
    def alpha(self) -> float:
        """alpha = sum_x min(p, q): the basic rule's chance to keep a draft."""
        return sc.acceptance_rate(self.p_target, self.q_draft)

    def signature(self) -> tuple:
        """What the stepped example depends on (a new one starts at decision 1)."""
        p, q = tuple(self.p_target.tolist()), tuple(self.q_draft.tolist())
        return (self.variant, p, q, self.m, self.widths, self.token, self.epsilon,
                self.delta, self.seed)  # fmt: skip


@dataclass(frozen=True)
class StepView:
    """One decision on screen: its figure, the decisions so far in words, a caption."""

    figure: go.Figure
    lines: list[str]
    caption: str = ""


@dataclass(frozen=True)
class Simulation:
    """How :func:`specdec_core.simulate_rounds` runs a variant: its name there, K, options."""

    variant: str
    k: int
    options: dict


def _basic_baseline(inp: Inputs) -> tuple[float, int]:
    """The basic rule with K drafts: E(alpha, K) tokens per round, K drafted tokens."""
    return float(sc.expected_tokens(inp.alpha, inp.k)), inp.k


def _no_options(inp: Inputs) -> dict:
    return {}


def _own_k(inp: Inputs) -> int:
    return inp.k


@dataclass(frozen=True)
class Variant:
    """How the page shows one rule (see the module docstring); the rule is in RULES."""

    uses_q: bool  # False: q is one-hot on the drafted token, typed as its index
    uses_k: bool  # False: K is the tree's depth
    example: Callable[[Inputs, np.random.Generator], object]
    n_steps: Callable[[object], int]
    step: Callable[[Inputs, object, int], StepView]
    compare: Callable[[Inputs], tuple[go.Figure, str]]  # section 3: figure and caption
    inputs: tuple[str, ...] = ()  # the rule's own widgets: "m", "widths", "token", "typical"
    options: Callable[[Inputs], dict] = _no_options  # the rule's options (law and Monte Carlo)
    baseline: Callable[[Inputs], tuple[float, int]] = _basic_baseline  # basic rule, drafted
    k: Callable[[Inputs], int] = _own_k  # positions per round of the Monte Carlo
    note: Callable[[Inputs, sc.SimulationResult], str] | None = None  # under the metrics


# ----------------------------------------------------------------------------- multi-draft
def _multi_example(inp: Inputs, rng: np.random.Generator) -> vr.MultiDraftResult:
    candidates = vr.draft_candidates(inp.q_draft, inp.m, rng)
    return vr.multidraft_step(inp.p_target, inp.q_draft, candidates, rng=rng)


def chain_decisions(step: vr.MultiDraftResult) -> int:
    """Decisions of a multi-draft step: one per candidate tried, plus the final sample."""
    return len(step.steps) + (0 if step.kept_index is not None else 1)


def chain_lines(step: vr.MultiDraftResult, shown: int, labels) -> list[str]:
    """Plain-text decisions 1..shown+1 of a multi-draft step (escape before display)."""
    lines = []
    for s in step.steps[: shown + 1]:
        verdict = "kept" if s.accepted else "rejected"
        lines.append(
            f"Candidate {s.index + 1} ({labels[s.token]}) meets p_{s.index + 1}: a = min(1, "
            f"{s.p_x:.3f} / {s.q_x:.3f}) = {s.acceptance_probability:.3f}; coin {s.coin:.3f} "
            f"{'<' if s.accepted else '>='} a: {verdict}."
        )
        if not s.accepted:
            lines.append(
                f"The target shrinks to its residual p_{s.index + 2} = norm(max(0, "
                f"p_{s.index + 1} - q)) before the next try."
            )
    if shown >= len(step.steps):
        lines.append(
            f"No candidate kept: emit a sample of p_{len(step.targets)}, which gives "
            f"{labels[step.emitted_token]}."
        )
    return lines


def _multi_step(inp: Inputs, step: vr.MultiDraftResult, shown: int) -> StepView:
    drafted = ", ".join(inp.labels[x] for x in step.candidates)
    return StepView(
        figures.residual_chain_figure(step, shown, inp.labels),
        chain_lines(step, shown, inp.labels),
        f"Drafted {inp.m} candidates from q: {drafted}. They are tried in order.",
    )


def _multi_options(inp: Inputs) -> dict:
    return {"n_candidates": inp.m}


def _multi_baseline(inp: Inputs) -> tuple[float, int]:
    return float(sc.expected_tokens(inp.alpha, inp.k)), inp.k * inp.m


def _multi_compare(inp: Inputs) -> tuple[go.Figure, str]:
    alpha, beta = vr.multidraft_acceptance(inp.p_target, inp.q_draft, [1, inp.m])
    return (
        figures.candidates_figure(inp.p_target, inp.q_draft, inp.k, inp.m),
        f"With m = {inp.m} candidates a position keeps one of them with probability "
        f"beta_{inp.m} = {beta:.3f}; with one candidate it is alpha = beta_1 = {alpha:.3f}.",
    )


# ----------------------------------------------------------------------------- token tree
def _tree_example(inp: Inputs, rng: np.random.Generator) -> vt.TreeResult:
    tree = vt.draft_tree(inp.q_draft, inp.widths, rng)
    return vt.verify_tree(inp.p_target, inp.q_draft, tree, rng=rng)


def tree_lines(result: vt.TreeResult, shown: int, labels) -> list[str]:
    """Plain-text node decisions 1..shown of a tree walk."""
    lines = []
    for depth, node in enumerate(result.node_steps[:shown]):
        tried = ", ".join(
            f"{labels[s.token]} ({'kept' if s.accepted else 'rejected'}, a = "
            f"{s.acceptance_probability:.3f}, coin {s.coin:.3f})"
            for s in node.steps
        )
        lines.append(f"Depth {depth + 1}: children tried in order: {tried}.")
    if shown >= len(result.node_steps):
        ending = (
            "a kept leaf: bonus token from p"
            if result.final_kind == "bonus"
            else "every child rejected: a sample of the last residual"
        )
        emitted = ", ".join(labels[t] for t in result.emitted_tokens)
        lines.append(f"End of the walk, {ending}. Emitted: {emitted} ({result.n_emitted} tokens).")
    return lines


def _tree_step(inp: Inputs, result: vt.TreeResult, shown: int) -> StepView:
    return StepView(
        figures.tree_figure(result, shown, inp.labels), tree_lines(result, shown, inp.labels)
    )


def _tree_options(inp: Inputs) -> dict:
    return {"branching": tuple(inp.widths)}


def _tree_depth(inp: Inputs) -> int:
    """A tree of widths b_1..b_D runs with K = D positions (multi-draft, one width each)."""
    return len(inp.widths)


def _tree_baseline(inp: Inputs) -> tuple[float, int]:
    """The tree against a chain as long as the tree has nodes."""
    nodes = int(np.sum(np.cumprod(inp.widths)))
    return vt.chain_expected_tokens(inp.p_target, inp.q_draft, nodes), nodes


def _tree_compare(inp: Inputs) -> tuple[go.Figure, str]:
    figure = figures.tree_width_figure(inp.p_target, inp.q_draft, len(inp.widths), inp.widths[0])
    return figure, ""


# ----------------------------------------------------------------------------- one-hot draft
def _onehot_example(inp: Inputs, rng: np.random.Generator) -> vr.MatchStep:
    return vr.onehot_match_step(inp.p_target, inp.token, rng=rng)


def _onehot_step(inp: Inputs, step: vr.MatchStep, shown: int) -> StepView:
    x_label = inp.labels[inp.token]
    if shown == 0:
        general = vr.onehot_general_rule(inp.p_target, inp.token)
        match = vr.onehot_match_rule(inp.p_target, inp.token)
        return StepView(
            figures.onehot_figure(general, match, inp.labels),
            [
                f"q is one-hot on {x_label}, so min(1, p/q) = p({x_label}) = "
                f"{general.keep_probability:.3f}, and max(0, p - q) is p with {x_label} removed.",
                "Sampling y ~ p and keeping the draft iff y = the draft gives the same two "
                "numbers: both bars agree.",
            ],
        )
    if shown == 1:
        general = vr.onehot_general_rule(inp.p_target, inp.token)
        verdict = "kept" if step.accepted else f"rejected, emit {inp.labels[step.sampled]}"
        return StepView(
            figures.emitted_figure(
                inp.p_target, general.emitted(), inp.labels, title="Emitted = p"
            ),
            [
                f"Coin {step.coin:.3f} samples y = {inp.labels[step.sampled]} from p: the "
                f"draft {x_label} is {verdict}.",
                "Over many rounds the emitted token follows p exactly: lossless.",
            ],
        )
    greedy = vr.greedy_rule(inp.p_target, inp.token)
    best = inp.labels[int(np.argmax(greedy.replacement))]
    word = "kept" if greedy.keep_probability else "rejected"
    return StepView(
        figures.emitted_figure(
            inp.p_target,
            greedy.emitted(),
            inp.labels,
            title="Greedy check (T = 0): emits argmax p",
        ),
        [
            f"At temperature 0 the target is one-hot on its argmax, {best}: the draft "
            f"{x_label} is kept iff it is {best} ({word} here), and a rejection emits {best}.",
            "The general rule with a one-hot p gives exactly this: the output is the target's "
            "own greedy text, whatever the draft proposes.",
        ],
    )


def _one_candidate_compare(inp: Inputs) -> tuple[go.Figure, str]:
    return figures.candidates_figure(inp.p_target, inp.q_draft, inp.k, 1), ""


# ----------------------------------------------------------------------------- typical
def _typical_example(inp: Inputs, rng: np.random.Generator) -> vr.TypicalStep:
    drafted = vr.draft_candidates(inp.q_draft, 1, rng)[0]
    return vr.typical_step(inp.p_target, drafted, epsilon=inp.epsilon, delta=inp.delta)


def _typical_step(inp: Inputs, step: vr.TypicalStep, shown: int) -> StepView:
    labels, eps, dlt = inp.labels, inp.epsilon, inp.delta
    if shown == 0:
        verdict = (
            "kept" if step.accepted else f"rejected: emit argmax p = {labels[step.emitted_token]}"
        )
        return StepView(
            figures.typical_figure(inp.p_target, inp.q_draft, step.token, eps, dlt, labels),
            [
                f"H(p) = {step.entropy:.3f} nats, tau = min({eps:g}, {dlt:g} x exp(-H)) = "
                f"{step.threshold:.3f}.",
                f"The draft proposed {labels[step.token]} with p = {step.p_x:.3f}: {verdict}.",
                "No coin, and q is never looked at.",
            ],
        )
    law = emitted(inp)
    tv = vr.total_variation(law, inp.p_target)
    return StepView(
        figures.emitted_figure(
            inp.p_target,
            law,
            labels,
            title=f"What typical acceptance emits: TV from p = {tv:.3f}",
        ),
        [
            "Exact law of the emitted token: q on the tokens above tau, the rest moved to "
            f"argmax p. Its total variation distance from p is {tv:.3f}: not lossless."
        ],
    )


def _typical_options(inp: Inputs) -> dict:
    return {"epsilon": inp.epsilon, "delta": inp.delta}


def _typical_compare(inp: Inputs) -> tuple[go.Figure, str]:
    ours, basic, _ = expected(inp)
    tv = vr.total_variation(emitted(inp), inp.p_target)
    return (
        figures.candidates_figure(inp.p_target, inp.q_draft, inp.k, 1),
        f"Typical acceptance drafts one candidate per position and emits {ours:.3f} tokens "
        f"per round against {basic:.3f} for the basic rule, at the price of TV = {tv:.3f}.",
    )


# ----------------------------------------------------------------------------- strict
def _strict_example(inp: Inputs, rng: np.random.Generator) -> vr.MatchStep:
    drafted = vr.draft_candidates(inp.q_draft, 1, rng)[0]
    return vr.strict_step(inp.p_target, inp.q_draft, drafted, rng=rng)


def _strict_step(inp: Inputs, step: vr.MatchStep, shown: int) -> StepView:
    alpha, beta = inp.alpha, vr.strict_acceptance(inp.p_target, inp.q_draft)
    x, y = inp.labels[step.token], inp.labels[step.sampled]
    p_x, q_x = float(inp.p_target[step.token]), float(inp.q_draft[step.token])
    if shown == 0:
        return StepView(
            figures.strict_rules_figure(
                inp.p_target, inp.q_draft, inp.labels, alpha=alpha, beta=beta
            ),
            [
                f"The draft proposed {x} (x ~ q). The probabilistic rule would keep it with "
                f"min(1, p/q) = {sc.acceptance_probability(p_x, q_x):.3f}; strict "
                f"verification keeps it only if the target's own sample y ~ p is {x}, which "
                f"happens with p({x}) = {p_x:.3f}.",
                f"Averaged over what the draft proposes: alpha = sum min(p, q) = {alpha:.3f} "
                f"against beta = sum p q = {beta:.3f}. Strict never keeps more.",
            ],
        )
    if shown == 1:
        verdict = f"y = x: {x} is kept" if step.accepted else f"y differs: emit y = {y}"
        return StepView(
            figures.strict_sample_figure(inp.p_target, step, inp.labels),
            [
                f"The target draws y ~ p with the coin u = {step.coin:.3f}: y = {y}; {verdict}.",
                "At the first mismatch the round ends with y, the target's own sample: no "
                "residual is needed.",
            ],
        )
    law = sc.emitted_distribution("strict", inp.p_target, inp.q_draft)  # the stepped rule's
    return StepView(
        figures.emitted_figure(inp.p_target, law, inp.labels, title="What strict emits: p exactly"),
        [
            "P(emit z) = q(z) p(z) (drafted and matched) + p(z) (1 − q(z)) (y = z, the draft "
            "differed) = p(z): lossless, like the probabilistic rule.",
            f"But a round keeps fewer drafts: E(beta, K) = "
            f"{float(sc.expected_tokens(beta, inp.k)):.3f} tokens per round at K = {inp.k}, "
            f"against E(alpha, K) = {float(sc.expected_tokens(alpha, inp.k)):.3f}.",
        ],
    )


def _strict_compare(inp: Inputs) -> tuple[go.Figure, str]:
    beta = vr.strict_acceptance(inp.p_target, inp.q_draft)
    return (
        figures.strict_length_figure(inp.alpha, beta, VARIANT_K_MAX, inp.k),
        "Both rules emit p exactly; the gap between the curves is what strict verification "
        "costs in tokens per round (it is the rule vLLM's rejection_sample_method = strict "
        "and mlx-lm use).",
    )


def _three_steps(_example) -> int:
    return 3


def _two_steps(_example) -> int:
    return 2


def _typical_note(inp: Inputs, result: sc.SimulationResult) -> str:
    """Why typical acceptance's histogram lies further from p than its one-position law."""
    tv = vr.total_variation(emitted(inp), inp.p_target)
    return (
        f"The exact TV, {tv:.3f}, is that of one drafted position: its token is the kept "
        "draft, or argmax p after a rejection. The histogram below counts every token of "
        "every round, including the token after K kept drafts, which typical acceptance "
        "also takes as argmax p (Medusa's default) instead of sampling p: so its bars lie "
        f"further from p (TV of the histogram: {histogram_tv(result, inp.p_target):.3f})."
    )


# The rows of the rules this lab was built with, in the order of its menu.
VARIANTS: dict[str, Variant] = {
    "multi_draft": Variant(
        uses_q=True,
        uses_k=True,
        example=_multi_example,
        n_steps=chain_decisions,
        step=_multi_step,
        compare=_multi_compare,
        inputs=("m",),
        options=_multi_options,
        baseline=_multi_baseline,
    ),
    "tree": Variant(
        uses_q=True,
        uses_k=False,
        example=_tree_example,
        n_steps=lambda result: len(result.node_steps) + 1,
        step=_tree_step,
        compare=_tree_compare,
        inputs=("widths",),
        options=_tree_options,
        baseline=_tree_baseline,
        k=_tree_depth,
    ),
    "deterministic": Variant(
        uses_q=False,
        uses_k=True,
        example=_onehot_example,
        n_steps=_three_steps,
        step=_onehot_step,
        compare=_one_candidate_compare,
        inputs=("token",),
    ),
    "typical_acceptance": Variant(
        uses_q=True,
        uses_k=True,
        example=_typical_example,
        n_steps=_two_steps,
        step=_typical_step,
        compare=_typical_compare,
        inputs=("typical",),
        options=_typical_options,
        note=_typical_note,
    ),
    "strict": Variant(
        uses_q=True,
        uses_k=True,
        example=_strict_example,
        n_steps=_three_steps,
        step=_strict_step,
        compare=_strict_compare,
    ),
}


# ----------------------------------------------------------------------------- any other rule
def _generic_example(inp: Inputs, rng: np.random.Generator) -> rules.PositionStep:
    return RULES[inp.variant].step(inp.p_target, inp.q_draft, rng)


def _generic_step(inp: Inputs, step: rules.PositionStep, shown: int) -> StepView:
    drafted = ", ".join(inp.labels[x] for x in step.drafted)
    verdict = "kept" if step.kept else "rejected"
    law = emitted(inp)
    tv = vr.total_variation(law, inp.p_target)
    return StepView(
        figures.emitted_figure(
            inp.p_target, law, inp.labels, title=f"What the rule emits: TV from p = {tv:.3f}"
        ),
        [
            f"The draft proposed {drafted}: {verdict}; the position emits "
            f"{inp.labels[step.emitted_token]}.",
            f"Exact law of the emitted token at one position: its distance from p is "
            f"TV = {tv:.3f}.",
        ],
    )


def _rows(inp: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """(K+1, V) and (K, V): the same p and q at every position of a round."""
    return np.tile(inp.p_target, (inp.k + 1, 1)), np.tile(inp.q_draft, (inp.k, 1))


def _round_example(inp: Inputs, rng: np.random.Generator) -> rules.RoundRecord:
    return RULES[inp.variant].round_step(*_rows(inp), rng)


def round_lines(inp: Inputs, record: rules.RoundRecord, shown: int) -> list[str]:
    """Plain-text decisions 1..shown+1 of a whole round: each drafted position with the
    rule's own numbers (named by its words), then what the round keeps and emits."""
    names = dict(rule_words(inp.variant).numbers)
    labels, k = inp.labels, len(record.drafted)
    lines = []
    for i in range(min(shown + 1, k)):
        said = "; ".join(
            f"{names.get(symbol, symbol)} = {values[i]:.3f}"
            for symbol, values in record.numbers.items()
        )
        lines.append(f"Position {i + 1}: drafted {labels[record.drafted[i]]} (x ~ q); {said}.")
    if shown >= k:
        last = labels[record.emitted[-1]]
        source = "the bonus token from p" if record.bonus else "a token of its replacement law"
        emitted_tokens = ", ".join(labels[t] for t in record.emitted)
        lines.append(
            f"The rule keeps {record.n_kept} of the {k} drafts and adds {last}, {source}. "
            f"Emitted this round: {emitted_tokens} ({len(record.emitted)} tokens)."
        )
    return lines


def _round_step(inp: Inputs, record: rules.RoundRecord, shown: int) -> StepView:
    names = dict(rule_words(inp.variant).numbers)
    drafted = [inp.labels[x] for x in record.drafted]
    return StepView(
        figures.round_numbers_figure(record.numbers, min(shown + 1, len(drafted)), drafted, names),
        round_lines(inp, record, shown),
        f"One whole round of K = {inp.k} drafts: {', '.join(drafted)}. This rule decides "
        "them together, so the round is stepped position by position, then its decision.",
    )


def _by_k_compare(inp: Inputs) -> tuple[go.Figure, str]:
    """Tokens per round against K: the rule's exact value and the token-by-token rule's."""
    rule, ours = RULES[inp.variant], []
    for k in range(1, VARIANT_K_MAX + 1):
        try:
            ours.append(rule.expected(inp.p_target, inp.q_draft, k))
        except sc.SpecDecError:  # e.g. an exact law too large to track: the curve stops
            break
    ks = np.arange(1, len(ours) + 1)  # the run at inp.k worked: it is among them
    basic = [RULES[rules.BASIC_RULE].expected(inp.p_target, inp.q_draft, int(k)) for k in ks]
    name = rule_title(inp.variant)
    figure = figures.tokens_by_k_figure(ks, ours, basic, inp.k, name)
    gain = ours[inp.k - 1] - basic[inp.k - 1]
    return figure, (
        f"At K = {inp.k}: {ours[inp.k - 1]:.3f} tokens per round against {basic[inp.k - 1]:.3f} "
        f"token by token ({gain:+.3f}), from the same drafts."
    )


def _gain_note(inp: Inputs, result: sc.SimulationResult) -> str:
    ours, basic, drafted = expected(inp)
    return (
        f"Gain over the token-by-token rule with the same {drafted} drafts: "
        f"{ours - basic:+.3f} tokens per round (exact), {ours / basic - 1:+.1%}; this run "
        f"emitted {result.mean_tokens_per_round:.3f}."
    )


def generic_row(name: str | None = None) -> Variant:
    """The row of a rule registered without one, from its properties: a rule with a
    whole-round step (``round_step``) is stepped a round at a time and compared with the
    token-by-token rule across K; any other shows one decision of its step and its law."""
    rule = RULES.get(name) if name is not None else None
    if rule is not None and rule.round_step is not None:
        return Variant(
            uses_q=True,
            uses_k=True,
            example=_round_example,
            n_steps=lambda record: len(record.drafted) + 1,
            step=_round_step,
            compare=_by_k_compare,
            note=_gain_note,
        )
    return Variant(
        uses_q=True,
        uses_k=True,
        example=_generic_example,
        n_steps=lambda _example: 1,
        step=_generic_step,
        compare=_by_k_compare,
    )


# ----------------------------------------------------------------------------- from the registry
def row(name: str) -> Variant:
    """How the page shows the rule ``name`` (its own row, or the generic one)."""
    return VARIANTS.get(name) or generic_row(name)


def menu() -> list[str]:
    """The Variant menu: the rules RULES offers this lab that are not bugs, in the order of
    :data:`VARIANTS`, then any other (e.g. a newly registered rule) in the registry's order."""
    offered = [
        rule.name for rule in rules.rules_of_kind(RuleKind.EXACT, RuleKind.LOSSY_BY_DESIGN, lab=LAB)
    ]
    order = list(VARIANTS)
    return sorted(offered, key=lambda name: order.index(name) if name in order else len(order))


def bug_of(name: str) -> rules.Rule | None:
    """The bug of the rule ``name`` this lab offers as its "Break it" checkbox (or None)."""
    return rules.bug_of(name, lab=LAB)


def simulated_rule(inp: Inputs) -> str:
    """The rule that runs: the chosen one, or its bug when "Break it" is ticked."""
    bug = bug_of(inp.variant)
    return bug.name if inp.broken and bug is not None else inp.variant


def simulation(inp: Inputs) -> Simulation:
    """How :func:`specdec_core.simulate_rounds` runs the chosen rule (or its bug)."""
    return Simulation(simulated_rule(inp), row(inp.variant).k(inp), row(inp.variant).options(inp))


def emitted(inp: Inputs) -> np.ndarray:
    """(V,) exact law at one drafted position of the rule that runs (the bug's if broken)."""
    options = row(inp.variant).options(inp)
    return sc.emitted_distribution(simulated_rule(inp), inp.p_target, inp.q_draft, **options)


def expected(inp: Inputs) -> tuple[float, float, int]:
    """E[tokens per round] of the chosen rule, of the basic rule it is compared with, and
    the drafted tokens per round of that comparison."""
    view = row(inp.variant)
    ours = RULES[inp.variant].expected(inp.p_target, inp.q_draft, view.k(inp), **view.options(inp))
    return float(ours), *view.baseline(inp)


def lossless(name: str) -> bool:
    """The rule ``name`` is exact: its output must follow p."""
    return RULES[name].kind is RuleKind.EXACT


def histogram_tv(result: sc.SimulationResult, p_target) -> float:
    """TV(simulated share, p) = 1/2 sum_x |n(x)/n - p(x)| over every emitted token.

    What the token histogram shows: all tokens of all rounds, the token after K kept
    drafts included (typical acceptance takes that one as argmax p as well), so it can
    differ from the one-position law of :attr:`Variant.emitted`.
    """
    counts = np.asarray(result.emitted_counts, dtype=np.float64)  # (V,)
    return vr.total_variation(counts / counts.sum(), p_target)
