"""The Variants lab's variants as data: one :class:`Variant` row each, in :data:`VARIANTS`.

A row says everything the page needs to show one verification rule: its name, whether it
is lossless, whether it uses q, the bug a student may switch on, how to draw one stepped
example and what each decision shows (figure and words), how to simulate many rounds
(:func:`specdec_core.simulate_rounds`' variant, K and options), its exact one-position
emitted law, its exact tokens per round beside the basic rule's, the figure that
compares it across settings, and the core function whose source the page shows. The page
(:mod:`specdec_ui.variants_view`) never asks which variant it shows: it reads the row.

Adding a rule: write its functions below and add one row; its words go in the row, its
presets in :mod:`specdec_ui.presets`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core import variants_tree as vt

from . import figures_variants as fv
from .presets import VARIANT_K_MAX


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


@dataclass(frozen=True)
class Variant:
    """One verification rule, as the page shows it (see the module docstring)."""

    name: str
    lossless: bool
    uses_q: bool  # False: q is one-hot on the drafted token, typed as its index
    uses_k: bool  # False: K is the tree's depth
    bug: str | None  # the "Break it" checkbox's words (None: no bug offered)
    bug_help: str
    example: Callable[[Inputs, np.random.Generator], object]
    n_steps: Callable[[object], int]
    step: Callable[[Inputs, object, int], StepView]
    simulation: Callable[[Inputs], Simulation]
    emitted: Callable[[Inputs], np.ndarray]  # exact law at one position (the bug's if broken)
    expected: Callable[[Inputs], tuple[float, float, int]]  # ours, basic rule's, drafted
    compare: Callable[[Inputs], tuple[go.Figure, str]]  # section 3: figure and caption
    source: Callable  # the core function the page shows
    # Why the bug can leave the output law at p for some p and q (shown when it does)
    bug_hidden: str = ""


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
        fv.residual_chain_figure(step, shown, inp.labels),
        chain_lines(step, shown, inp.labels),
        f"Drafted {inp.m} candidates from q: {drafted}. They are tried in order.",
    )


def _multi_simulation(inp: Inputs) -> Simulation:
    name = "multi_draft_no_residual" if inp.broken else "multi_draft"
    return Simulation(name, inp.k, {"n_candidates": inp.m})


def _multi_emitted(inp: Inputs) -> np.ndarray:
    name = "multi_draft_no_residual" if inp.broken else "multi_draft"
    return vr.emitted_distribution(name, inp.p_target, inp.q_draft, n_candidates=inp.m)


def _multi_expected(inp: Inputs) -> tuple[float, float, int]:
    ours = vr.multidraft_expected_tokens(inp.p_target, inp.q_draft, inp.k, inp.m)
    return ours, float(sc.expected_tokens(inp.alpha, inp.k)), inp.k * inp.m


def _multi_compare(inp: Inputs) -> tuple[go.Figure, str]:
    alpha, beta = vr.multidraft_acceptance(inp.p_target, inp.q_draft, [1, inp.m])
    return (
        fv.candidates_figure(inp.p_target, inp.q_draft, inp.k, inp.m),
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
        fv.tree_figure(result, shown, inp.labels), tree_lines(result, shown, inp.labels)
    )


def _tree_simulation(inp: Inputs) -> Simulation:
    """A tree of widths b_1..b_D runs as multi-draft with one width per position (K = D)."""
    return Simulation("multi_draft", len(inp.widths), {"n_candidates": tuple(inp.widths)})


def _tree_emitted(inp: Inputs) -> np.ndarray:
    return vr.emitted_distribution("tree", inp.p_target, inp.q_draft, branching=inp.widths)


def _tree_expected(inp: Inputs) -> tuple[float, float, int]:
    """The tree against a chain as long as the tree has nodes."""
    nodes = int(np.sum(np.cumprod(inp.widths)))
    return (
        vt.tree_expected_tokens(inp.p_target, inp.q_draft, inp.widths),
        vt.chain_expected_tokens(inp.p_target, inp.q_draft, nodes),
        nodes,
    )


def _tree_compare(inp: Inputs) -> tuple[go.Figure, str]:
    figure = fv.tree_width_figure(inp.p_target, inp.q_draft, len(inp.widths), inp.widths[0])
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
            fv.onehot_figure(general, match, inp.labels),
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
            fv.emitted_figure(inp.p_target, general.emitted(), inp.labels, title="Emitted = p"),
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
        fv.emitted_figure(
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


def _basic_simulation(inp: Inputs) -> Simulation:
    return Simulation("correct", inp.k, {})


def _onehot_emitted(inp: Inputs) -> np.ndarray:
    return vr.emitted_distribution("deterministic", inp.p_target, inp.q_draft)


def _basic_expected(inp: Inputs) -> tuple[float, float, int]:
    basic = float(sc.expected_tokens(inp.alpha, inp.k))
    return basic, basic, inp.k


def _one_candidate_compare(inp: Inputs) -> tuple[go.Figure, str]:
    return fv.candidates_figure(inp.p_target, inp.q_draft, inp.k, 1), ""


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
            fv.typical_figure(inp.p_target, inp.q_draft, step.token, eps, dlt, labels),
            [
                f"H(p) = {step.entropy:.3f} nats, tau = min({eps:g}, {dlt:g} x exp(-H)) = "
                f"{step.threshold:.3f}.",
                f"The draft proposed {labels[step.token]} with p = {step.p_x:.3f}: {verdict}.",
                "No coin, and q is never looked at.",
            ],
        )
    tv = vr.total_variation(_typical_emitted(inp), inp.p_target)
    return StepView(
        fv.emitted_figure(
            inp.p_target,
            _typical_emitted(inp),
            labels,
            title=f"What typical acceptance emits: TV from p = {tv:.3f}",
        ),
        [
            "Exact law of the emitted token: q on the tokens above tau, the rest moved to "
            f"argmax p. Its total variation distance from p is {tv:.3f}: not lossless."
        ],
    )


def _typical_simulation(inp: Inputs) -> Simulation:
    return Simulation("typical_acceptance", inp.k, {"epsilon": inp.epsilon, "delta": inp.delta})


def _typical_emitted(inp: Inputs) -> np.ndarray:
    return vr.emitted_distribution(
        "typical_acceptance", inp.p_target, inp.q_draft, epsilon=inp.epsilon, delta=inp.delta
    )


def _typical_expected(inp: Inputs) -> tuple[float, float, int]:
    ours = vr.typical_expected_tokens(inp.p_target, inp.q_draft, inp.k, inp.epsilon, inp.delta)
    return ours, float(sc.expected_tokens(inp.alpha, inp.k)), inp.k


def _typical_compare(inp: Inputs) -> tuple[go.Figure, str]:
    ours, basic, _ = _typical_expected(inp)
    tv = vr.total_variation(_typical_emitted(inp), inp.p_target)
    return (
        fv.candidates_figure(inp.p_target, inp.q_draft, inp.k, 1),
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
            fv.strict_rules_figure(inp.p_target, inp.q_draft, inp.labels, alpha=alpha, beta=beta),
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
            fv.strict_sample_figure(inp.p_target, step, inp.labels),
            [
                f"The target draws y ~ p with the coin u = {step.coin:.3f}: y = {y}; {verdict}.",
                "At the first mismatch the round ends with y, the target's own sample: no "
                "residual is needed.",
            ],
        )
    emitted = _strict_emitted(inp)
    return StepView(
        fv.emitted_figure(inp.p_target, emitted, inp.labels, title="What strict emits: p exactly"),
        [
            "P(emit z) = q(z) p(z) (drafted and matched) + p(z) (1 − q(z)) (y = z, the draft "
            "differed) = p(z): lossless, like the probabilistic rule.",
            f"But a round keeps fewer drafts: E(beta, K) = "
            f"{float(sc.expected_tokens(beta, inp.k)):.3f} tokens per round at K = {inp.k}, "
            f"against E(alpha, K) = {float(sc.expected_tokens(alpha, inp.k)):.3f}.",
        ],
    )


def _strict_simulation(inp: Inputs) -> Simulation:
    return Simulation("strict_fresh_sample" if inp.broken else "strict", inp.k, {})


def _strict_emitted(inp: Inputs) -> np.ndarray:
    return vr.strict_emitted(inp.p_target, inp.q_draft, fresh_after_mismatch=inp.broken)


def _strict_expected(inp: Inputs) -> tuple[float, float, int]:
    ours = vr.strict_expected_tokens(inp.p_target, inp.q_draft, inp.k)
    return ours, float(sc.expected_tokens(inp.alpha, inp.k)), inp.k


def _strict_compare(inp: Inputs) -> tuple[go.Figure, str]:
    beta = vr.strict_acceptance(inp.p_target, inp.q_draft)
    return (
        fv.strict_length_figure(inp.alpha, beta, VARIANT_K_MAX, inp.k),
        "Both rules emit p exactly; the gap between the curves is what strict verification "
        "costs in tokens per round (it is the rule vLLM's rejection_sample_method = strict "
        "and mlx-lm use).",
    )


def _three_steps(_example) -> int:
    return 3


def _two_steps(_example) -> int:
    return 2


VARIANTS: dict[str, Variant] = {
    "multi_draft": Variant(
        name="Multi-draft: m candidates per position (SpecInfer)",
        lossless=True,
        uses_q=True,
        uses_k=True,
        bug="Break it: skip the residual update",
        bug_help="Try every candidate against the original p: a common mistake. The Monte "
        "Carlo test below should catch it.",
        example=_multi_example,
        n_steps=chain_decisions,
        step=_multi_step,
        simulation=_multi_simulation,
        emitted=_multi_emitted,
        expected=_multi_expected,
        compare=_multi_compare,
        source=vr.multidraft_step,
    ),
    "tree": Variant(
        name="Token tree (SpecInfer, Medusa, EAGLE)",
        lossless=True,
        uses_q=True,
        uses_k=False,
        bug=None,
        bug_help="",
        example=_tree_example,
        n_steps=lambda result: len(result.node_steps) + 1,
        step=_tree_step,
        simulation=_tree_simulation,
        emitted=_tree_emitted,
        expected=_tree_expected,
        compare=_tree_compare,
        source=vt.verify_tree,
    ),
    "deterministic": Variant(
        name="Deterministic draft: prompt lookup, n-gram (one-hot q)",
        lossless=True,
        uses_q=False,
        uses_k=True,
        bug=None,
        bug_help="",
        example=_onehot_example,
        n_steps=_three_steps,
        step=_onehot_step,
        simulation=_basic_simulation,
        emitted=_onehot_emitted,
        expected=_basic_expected,
        compare=_one_candidate_compare,
        source=vr.onehot_general_rule,
    ),
    "typical_acceptance": Variant(
        name="Typical acceptance (Medusa): fast but lossy",
        lossless=False,
        uses_q=True,
        uses_k=True,
        bug=None,
        bug_help="",
        example=_typical_example,
        n_steps=_two_steps,
        step=_typical_step,
        simulation=_typical_simulation,
        emitted=_typical_emitted,
        expected=_typical_expected,
        compare=_typical_compare,
        source=vr.typical_step,
    ),
    "strict": Variant(
        name="Strict verification (vLLM strict, mlx-lm): keep only an exact match",
        lossless=True,
        uses_q=True,
        uses_k=True,
        bug="Break it: at a mismatch, emit a fresh sample of p instead of y",
        bug_help="Throw the target's own sample y away after a mismatch and draw a new one: "
        "the emitted token then leans towards the drafts. The Monte Carlo test below should "
        "catch it.",
        example=_strict_example,
        n_steps=_three_steps,
        step=_strict_step,
        simulation=_strict_simulation,
        emitted=_strict_emitted,
        expected=_strict_expected,
        compare=_strict_compare,
        source=vr.strict_step,
        bug_hidden="This bug emits p(z) (q(z) + 1 − beta) instead of p(z), and that is p "
        "itself when q is flat on p's support (q(z) = beta for every z that p can emit), as "
        "here. Pick the preset “Strict verification keeps fewer drafts” or type a q that is "
        "not flat to watch the test catch it.",
    ),
}


def results_csv_table(result: sc.SimulationResult, labels, emitted, settings: dict) -> pd.DataFrame:
    """Tokens observed, p, the exact emitted law; then rounds by length; settings on every row."""
    tokens = pd.DataFrame(
        {
            "table": "tokens",
            "item": [str(label) for label in labels],
            "observed": result.emitted_counts,
            "expected if lossless": result.expected_counts,
            "exact emitted share (position 1)": np.asarray(emitted, float),
        }
    )
    lengths = np.arange(1, result.k_drafts + 2)
    rounds = pd.DataFrame(
        {
            "table": "tokens per round",
            "item": lengths.astype(str),
            "observed": result.tokens_per_round_counts[1:],
            "expected if lossless": sc.tokens_per_round_distribution(result.alphas)
            * result.n_rounds,
        }
    )
    frame = pd.concat([tokens, rounds], ignore_index=True)
    for name, value in settings.items():
        frame[name] = value
    return frame


def histogram_tv(result: sc.SimulationResult, p_target) -> float:
    """TV(simulated share, p) = 1/2 sum_x |n(x)/n - p(x)| over every emitted token.

    What the token histogram shows: all tokens of all rounds, the token after K kept
    drafts included (typical acceptance takes that one as argmax p as well), so it can
    differ from the one-position law of :attr:`Variant.emitted`.
    """
    counts = np.asarray(result.emitted_counts, dtype=np.float64)  # (V,)
    return vr.total_variation(counts / counts.sum(), p_target)


def p_value_text(p_value: float) -> str:
    """chi2.sf underflows to 0 below about 1e-300: say so instead of printing 0."""
    return "< 1e-300" if p_value == 0 else f"{p_value:.3g}"
