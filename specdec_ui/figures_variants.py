"""Figures and tables of the Variants lab.

Pure functions of core results (and of p, q): they return plotly figures and
pandas tables and never read widgets. The lab's presets live here, so that
the page, its tests and the e2e flow share them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core import variants_tree as vt

from .text import plotly_escape
from .theme import (
    COLORS,
    OUTLINE,
    PATTERN,
    STATUS_SYMBOL,
    STATUS_WORD,
    draft_markers,
    make_figure,
)

VARIANT_NAMES: dict[str, str] = {
    "multi_draft": "Multi-draft: m candidates per position (SpecInfer)",
    "tree": "Token tree (SpecInfer, Medusa, EAGLE)",
    "deterministic": "Deterministic draft: prompt lookup, n-gram (one-hot q)",
    "typical_acceptance": "Typical acceptance (Medusa): fast but lossy",
}
LOSSLESS = {"multi_draft": True, "tree": True, "deterministic": True, "typical_acceptance": False}
MIN_ROUNDS, MAX_ROUNDS_PAGE, DEFAULT_ROUNDS = 1_000, 300_000, 50_000
MAX_M_PAGE = 8
MAX_TREE_HEIGHT = 1_000  # px: a 340-node tree is drawn, not read node by node
CUSTOM = "custom"


@dataclass(frozen=True)
class VariantPreset:
    """A variant, a target p and a draft q that make one point."""

    key: str
    label: str
    variant: str
    p_text: str
    q_text: str
    labels: tuple[str, ...]
    lesson: str
    m: int = 2
    widths_text: str = "2, 2"
    k: int = 3
    token: int = 0
    settings: dict = field(default_factory=dict)


PRESETS: dict[str, VariantPreset] = {
    p.key: p
    for p in (
        VariantPreset(
            "rescue",
            "Two candidates rescue a draft that one cannot",
            "multi_draft",
            "0.70, 0.30, 0, 0",
            "0.25, 0.25, 0.25, 0.25",
            ("the", "a", "cat", "dog"),
            "One candidate from the flat draft is kept only half the time (alpha = 0.5). After "
            "a rejection the target shrinks to its residual [0.9, 0.1, 0, 0], and a second "
            "candidate is kept with 0.35 more: beta_2 = 1 - 0.5 x 0.65 = 0.675.",
            m=2,
        ),
        VariantPreset(
            "disjoint",
            "More candidates stop helping once p and q are disjoint",
            "multi_draft",
            "0.30, 0.30, 0.40",
            "0.50, 0.50, 0",
            ("yes", "no", "maybe"),
            "The draft never proposes 'maybe'. After one rejection the residual is all on "
            "'maybe', which no candidate can ever be: beta_m = 0.6 for every m.",
            m=4,
        ),
        VariantPreset(
            "typical-flat",
            "Typical acceptance is faster and visibly biased on a flat p",
            "typical_acceptance",
            "0.20, 0.20, 0.20, 0.20, 0.20",
            "0.60, 0.10, 0.10, 0.10, 0.10",
            ("A", "B", "C", "D", "E"),
            "A flat p has a high entropy, so the threshold min(0.09, 0.3 exp(-H)) = 0.06 is low: "
            "every draft passes. Every round emits K + 1 tokens, but they follow q, not p: "
            "TV = 0.4.",
            k=3,
        ),
        VariantPreset(
            "tree",
            "A token tree: widths 2, 2 against a chain of 6 drafts",
            "tree",
            "0.50, 0.30, 0.20",
            "0.20, 0.20, 0.60",
            ("A", "B", "C"),
            "Each node tries its children with the multi-draft rule; the walk enters the kept "
            "child. Six drafted tokens in a tree of widths (2, 2) give fewer tokens per round "
            "than a chain of 6 when the draft is this good, more when it is poor.",
            widths_text="2, 2",
        ),
        VariantPreset(
            "lookup",
            "Prompt lookup: a draft without probabilities",
            "deterministic",
            "0.40, 0.25, 0.20, 0.10, 0.05",
            "0, 1, 0, 0, 0",
            ("A", "B", "C", "D", "E"),
            "The draft proposes B for sure (q one-hot): keep it with probability p(B) = 0.25, "
            "otherwise sample p with B removed. Same law as 'sample y ~ p, keep B iff y = B'.",
            token=1,
        ),
    )
}
DEFAULT_PRESET = "rescue"


def _x(labels) -> list[str]:
    return [plotly_escape(lab) for lab in labels]


def residual_chain_figure(step: vr.MultiDraftResult, shown: int, labels) -> go.Figure:
    """The targets p_1, p_2, ... met by the candidates, up to decision ``shown`` (0-based).

    Traces: "p_1 (target)", "p_2 (residual)", ... as bars, fading with age;
    "draft q" as open circles; "candidate i" as a star on the bar it hits.
    """
    x = _x(labels)
    targets = step.targets[: min(shown + 1, len(step.targets))]
    traces = []
    for i, target in enumerate(targets):
        newest = i == len(targets) - 1
        traces.append(
            {
                "type": "bar",
                "x": x,
                "y": target,
                "name": f"p_{i + 1} ({'target' if i == 0 else 'residual'})",
                "marker": {
                    "color": COLORS["p"] if i == 0 else COLORS["residual"],
                    "pattern": {"shape": "" if i == 0 else PATTERN["residual"]},
                },
                "opacity": 1.0 if newest else 0.35,
                "hovertemplate": f"%{{x}}: p_{i + 1} = %{{y:.3f}}<extra></extra>",
            }
        )
    traces.append(draft_markers(x, step.q_rows[0]))
    for s in step.steps[: shown + 1]:
        status = "accepted" if s.accepted else "rejected"
        traces.append(
            {
                "type": "scatter",
                "x": [x[s.token]],
                "y": [s.p_x],
                "mode": "markers+text",
                "name": f"candidate {s.index + 1}: {STATUS_SYMBOL[status]} {STATUS_WORD[status]}",
                "text": [f"{s.index + 1}"],
                "textposition": "top center",
                "marker": {"symbol": "star", "size": 18, "color": COLORS[status]},
            }
        )
    return make_figure(
        traces,
        title=_chain_title(step, shown, labels),
        barmode="group",
        yaxis={"title": {"text": "probability"}, "rangemode": "tozero"},
    )


def chain_decisions(step: vr.MultiDraftResult) -> int:
    """Decisions to step through: one per tried candidate, plus the final sample if all failed."""
    return len(step.steps) + (step.kept_index is None)


def _chain_title(step: vr.MultiDraftResult, shown: int, labels) -> str:
    if shown < len(step.steps):
        s = step.steps[shown]
        word = "kept" if s.accepted else "rejected"
        return (
            f"Candidate {s.index + 1}: {plotly_escape(labels[s.token])}, a = min(1, "
            f"{s.p_x:.3f} / {s.q_x:.3f}) = {s.acceptance_probability:.3f}, "
            f"coin {s.coin:.3f}: {word}"
        )
    return (
        f"All {len(step.steps)} rejected: a sample of p_{len(step.targets)} gives "
        f"{plotly_escape(labels[step.emitted_token])}"
    )


def _tree_layout(tree: vt.DraftTree) -> dict[int, tuple[float, float]]:
    """(x = depth, y = vertical slot) per node, leaves spread evenly, parents centred."""
    pos: dict[int, tuple[float, float]] = {}
    next_leaf = [0.0]

    def place(node: int, depth: int) -> float:
        """Place the subtree of ``node``; returns the node's y (mean of its children's)."""
        kids = tree.children(node)
        y = float(np.mean([place(c, depth + 1) for c in kids])) if kids else next_leaf[0]
        if not kids:
            next_leaf[0] += 1.0
        pos[node] = (float(depth), y)
        return y

    place(-1, 0)
    return pos


def _node_status(result: vt.TreeResult, shown: int) -> dict[int, str]:
    status: dict[int, str] = {}
    for d, step in enumerate(result.node_steps[:shown]):
        parent = -1 if d == 0 else result.path[d - 1]
        kids = result.tree.children(parent)
        for s in step.steps:
            status[kids[s.index]] = "accepted" if s.accepted else "rejected"
        for c in kids[len(step.steps) :]:
            status.setdefault(c, "discarded")
    return status


def tree_figure(result: vt.TreeResult, shown: int, labels) -> go.Figure:
    """The drafted tree, with the first ``shown`` node decisions coloured.

    Traces: "edges" (lines), one marker trace per status ("root", "kept",
    "rejected", "not checked yet", "never reached"), and after the last
    decision the final token ("bonus" or "resampled") beside the node it follows.
    """
    tree, pos = result.tree, _tree_layout(result.tree)
    ex, ey = [], []
    for i, par in enumerate(tree.parents):
        ex += [pos[par][0], pos[i][0], None]
        ey += [pos[par][1], pos[i][1], None]
    traces = [
        {
            "type": "scatter",
            "x": ex,
            "y": ey,
            "mode": "lines",
            "name": "edges",
            "line": {"color": "#BBBBBB", "width": 2},
            "hoverinfo": "skip",
            "showlegend": False,
        }
    ]
    status = _node_status(result, shown)
    groups = {"accepted": [], "rejected": [], "pending": [], "discarded": []}
    for i in range(tree.n_nodes):
        groups[status.get(i, "pending")].append(i)
    traces.append(_markers([-1], pos, ["root"], "root", OUTLINE, "square"))
    for key, nodes in groups.items():
        if nodes:
            word = f"{STATUS_SYMBOL[key]} {STATUS_WORD[key]}"
            color = COLORS.get(key, "#DDDDDD") if key != "pending" else "#DDDDDD"
            traces.append(
                _markers(nodes, pos, [labels[tree.tokens[n]] for n in nodes], word, color)
            )
    if shown >= len(result.node_steps):
        traces.append(_final_marker(result, pos, labels))
    return make_figure(
        traces,
        title=_tree_title(result, shown, labels),
        height=min(max(300, 40 * tree.n_nodes), MAX_TREE_HEIGHT),
        xaxis={"title": {"text": "depth"}, "dtick": 1, "range": [-0.4, tree.max_depth + 1.6]},
        yaxis={"visible": False},
    )


def _markers(nodes, pos, texts, name, color, symbol="circle") -> dict:
    return {
        "type": "scatter",
        "mode": "markers+text",
        "name": name,
        "x": [pos[n][0] for n in nodes],
        "y": [pos[n][1] for n in nodes],
        "text": [plotly_escape(t) for t in texts],
        "textposition": "middle right",
        "marker": {
            "size": 22,
            "color": color,
            "symbol": symbol,
            "line": {"width": 1, "color": "#333"},
        },
    }


def _final_marker(result: vt.TreeResult, pos, labels) -> dict:
    last = result.path[-1] if result.path else -1
    x, y = pos[last]
    kind = sc.FINAL_STATUS[result.final_kind]
    return {
        "type": "scatter",
        "mode": "markers+text",
        "x": [x + 1],
        "y": [y],
        "name": f"{STATUS_SYMBOL[kind]} {STATUS_WORD[kind]} token",
        "text": [plotly_escape(labels[result.final_token])],
        "textposition": "middle right",
        "marker": {
            "size": 24,
            "color": COLORS[kind],
            "symbol": "star",
            "line": {"width": 1, "color": "#333"},
        },
    }


def _tree_title(result: vt.TreeResult, shown: int, labels) -> str:
    if shown == 0:
        return f"A drafted tree of {result.tree.n_nodes} tokens: start at the root"
    if shown < len(result.node_steps) or shown == len(result.node_steps) and not result.path:
        kept = result.node_steps[shown - 1].kept_index
        return f"Decision {shown}: " + (
            "a child is kept, walk into it" if kept is not None else "every child rejected"
        )
    words = ", ".join(plotly_escape(labels[t]) for t in result.emitted_tokens)
    return f"{result.n_emitted} tokens emitted: {words} ({result.final_kind})"


def typical_figure(p_target, q_draft, token: int, epsilon: float, delta: float, labels):
    """p with the threshold tau = min(epsilon, delta exp(-H(p))) and the draft token marked.

    Traces: "target p" (bars, coloured kept/rejected by p(x) > tau), "draft q"
    (open circles), "threshold" (a dashed line at tau).
    """
    p_arr, x = np.asarray(p_target, float), _x(labels)
    tau = vr.typical_threshold(p_arr, epsilon, delta)
    colors = [COLORS["accepted"] if v > tau else COLORS["rejected"] for v in p_arr]
    traces = [
        {
            "type": "bar",
            "x": x,
            "y": p_arr,
            "name": "target p (blue: passes, red: fails)",
            "marker": {"color": colors},
        },
        draft_markers(x, np.asarray(q_draft, float)),
        {
            "type": "scatter",
            "x": [x[0], x[-1]],
            "y": [tau, tau],
            "mode": "lines",
            "name": f"threshold tau = {tau:.3f}",
            "line": {"dash": "dash", "color": OUTLINE},
        },
        {
            "type": "scatter",
            "x": [x[token]],
            "y": [p_arr[token]],
            "mode": "markers",
            "name": f"drafted {plotly_escape(labels[token])}",
            "marker": {"symbol": "star", "size": 20, "color": COLORS["q"]},
        },
    ]
    return make_figure(
        traces,
        title=f"Keep x iff p(x) > min({epsilon:g}, {delta:g} exp(-H(p))) = {tau:.3f}",
        yaxis={"title": {"text": "probability"}, "rangemode": "tozero"},
    )


def emitted_figure(p_target, emitted, labels, *, title: str) -> go.Figure:
    """What a variant emits at one position (bars) against p (diamonds)."""
    x = _x(labels)
    traces = [
        {
            "type": "bar",
            "x": x,
            "y": np.asarray(emitted, float),
            "name": "emitted (exact)",
            "marker": {"color": COLORS["resampled"]},
        },
        {
            "type": "scatter",
            "x": x,
            "y": np.asarray(p_target, float),
            "mode": "markers",
            "name": "target p",
            "marker": {
                "symbol": "diamond",
                "size": 16,
                "color": COLORS["p"],
                "line": {"width": 1, "color": "#333"},
            },
        },
    ]
    return make_figure(
        traces, title=title, yaxis={"title": {"text": "probability"}, "rangemode": "tozero"}
    )


def onehot_figure(general: vr.OneHotRule, match: vr.OneHotRule, labels) -> go.Figure:
    """The general rule with q one-hot against 'sample y ~ p, keep iff y == x': same law.

    Traces: "general rule: replacement", "y ~ p rule: replacement" (bars), and
    two markers with the keep probabilities at the drafted token.
    """
    x = _x(labels)
    t = general.token
    traces = [
        {
            "type": "bar",
            "x": x,
            "y": general.replacement,
            "name": "min(1, p/q) rule: replacement",
            "marker": {"color": COLORS["residual"]},
        },
        {
            "type": "bar",
            "x": x,
            "y": match.replacement,
            "name": "y ~ p rule: replacement",
            "marker": {"color": COLORS["p"], "pattern": {"shape": "/"}},
        },
        {
            "type": "scatter",
            "x": [x[t], x[t]],
            "y": [general.keep_probability, match.keep_probability],
            "mode": "markers",
            "name": "P(keep the draft)",
            "marker": {"symbol": ["star", "diamond"], "size": 18, "color": COLORS["accepted"]},
        },
    ]
    return make_figure(
        traces,
        title=f"Keep {plotly_escape(labels[t])} with p = {general.keep_probability:.3f}; "
        "else sample p without it",
        yaxis={"title": {"text": "probability"}, "rangemode": "tozero"},
    )


def _current_choice(x: float, y: float, name: str) -> dict:
    """A star at the page's current setting on a curve (m candidates, tree width)."""
    return {
        "type": "scatter",
        "x": [x],
        "y": [y],
        "mode": "markers",
        "name": name,
        "marker": {"symbol": "star", "size": 20, "color": COLORS["accepted"]},
    }


def candidates_figure(p_target, q_draft, k: int, m_current: int, m_max: int = MAX_M_PAGE):
    """Tokens per round against the number of candidates m (1..m_max), K positions.

    Traces: "E[tokens], m candidates" (line + markers: sum_i beta_m^i),
    "beta_m" on a second axis, "you are here" (the current m).
    """
    ms = np.arange(1, m_max + 1)
    tokens = vr.multidraft_expected_tokens(p_target, q_draft, k, ms)
    beta = vr.multidraft_acceptance(p_target, q_draft, ms)
    traces = [
        {
            "type": "scatter",
            "x": ms,
            "y": tokens,
            "mode": "lines+markers",
            "name": f"E[tokens per round], K = {k}",
            "line": {"color": COLORS["theory"]},
        },
        {
            "type": "scatter",
            "x": ms,
            "y": beta,
            "mode": "lines+markers",
            "yaxis": "y2",
            "name": "beta_m: P(some candidate kept)",
            "line": {"dash": "dot", "color": COLORS["q"]},
        },
        _current_choice(m_current, tokens[m_current - 1], f"m = {m_current}"),
    ]
    return make_figure(
        traces,
        title="More candidates per position: diminishing returns",
        xaxis={"title": {"text": "candidates per position m"}, "dtick": 1},
        yaxis={"title": {"text": "tokens per round"}, "rangemode": "tozero"},
        yaxis2={
            "title": {"text": "beta_m"},
            "overlaying": "y",
            "side": "right",
            "range": [0, 1.05],
            "showgrid": False,
        },
    )


def tree_width_figure(p_target, q_draft, depth: int, width_current: int) -> go.Figure:
    """E[tokens per round] of a full tree (width b, depth D) and of a chain as long.

    Traces: "tree, width b" (sum over depths of prod beta_b), "chain with the
    same drafted tokens" (N = b + b^2 + ... + b^D drafts), "current".
    """
    widths = np.arange(1, vt.MAX_BRANCHING + 1)
    tree = [vt.tree_expected_tokens(p_target, q_draft, (int(b),) * depth) for b in widths]
    nodes = [int(sum(int(b) ** d for d in range(1, depth + 1))) for b in widths]
    chain = [vt.chain_expected_tokens(p_target, q_draft, n) for n in nodes]
    traces = [
        {
            "type": "scatter",
            "x": widths,
            "y": tree,
            "mode": "lines+markers",
            "name": f"tree of depth {depth}",
            "line": {"color": COLORS["theory"]},
            "customdata": nodes,
            "hovertemplate": "width %{x}: %{y:.3f} tokens, %{customdata} drafted<extra></extra>",
        },
        {
            "type": "scatter",
            "x": widths,
            "y": chain,
            "mode": "lines+markers",
            "name": "chain with as many drafted tokens",
            "line": {"dash": "dot", "color": COLORS["q"]},
        },
        _current_choice(width_current, tree[width_current - 1], f"width {width_current}"),
    ]
    return make_figure(
        traces,
        title="Tokens per round: tree against chain, same number of drafted tokens",
        xaxis={"title": {"text": "tree width b (children per node)"}, "dtick": 1},
        yaxis={"title": {"text": "tokens per round"}, "rangemode": "tozero"},
    )


def results_csv_table(result: sc.SimulationResult, labels, emitted, settings: dict) -> pd.DataFrame:
    """Tokens observed, p, the exact emitted law; then rounds by length; settings on every row."""
    observed = result.emitted_counts
    tokens = pd.DataFrame(
        {
            "table": "tokens",
            "item": [str(lab) for lab in labels],
            "observed": observed,
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


def tree_lines(result: vt.TreeResult, shown: int, labels) -> list[str]:
    """Plain-text node decisions 1..shown of a tree walk."""
    lines = []
    for d, step in enumerate(result.node_steps[:shown]):
        tried = ", ".join(
            f"{labels[s.token]} ({'kept' if s.accepted else 'rejected'}, a = "
            f"{s.acceptance_probability:.3f}, coin {s.coin:.3f})"
            for s in step.steps
        )
        lines.append(f"Depth {d + 1}: children tried in order: {tried}.")
    if shown >= len(result.node_steps):
        ending = (
            "a kept leaf: bonus token from p"
            if result.final_kind == "bonus"
            else "every child rejected: a sample of the last residual"
        )
        emitted = ", ".join(labels[t] for t in result.emitted_tokens)
        lines.append(f"End of the walk, {ending}. Emitted: {emitted} ({result.n_emitted} tokens).")
    return lines


def simulation_args(variant: str, *, k: int, m: int, widths, epsilon: float, delta: float):
    """The page's variant -> (simulate_rounds variant, K, options).

    A tree of widths b_1..b_D runs as multi-draft with one width per position
    (K = D); a deterministic draft runs the basic rule with its one-hot q.
    """
    if variant == "multi_draft":
        return "multi_draft", k, {"n_candidates": m}
    if variant == "tree":
        return "multi_draft", len(widths), {"n_candidates": tuple(widths)}
    if variant == "deterministic":
        return "correct", k, {}
    return "typical_acceptance", k, {"epsilon": epsilon, "delta": delta}


def emitted_law(
    variant: str, p_target, q_draft, *, m: int, widths, epsilon, delta, broken: bool = False
):
    """The exact one-position law of the page's variant (via vr.emitted_distribution).

    ``broken`` (multi-draft only): the bug that skips the residual update.
    """
    if variant == "multi_draft":
        name = "multi_draft_no_residual" if broken else "multi_draft"
        return vr.emitted_distribution(name, p_target, q_draft, n_candidates=m)
    if variant == "tree":
        return vr.emitted_distribution("tree", p_target, q_draft, branching=tuple(widths))
    if variant == "deterministic":
        return vr.emitted_distribution("deterministic", p_target, q_draft)
    return vr.emitted_distribution(
        "typical_acceptance", p_target, q_draft, epsilon=epsilon, delta=delta
    )


def expected_tokens_of(variant: str, p_target, q_draft, *, k, m, widths, epsilon, delta):
    """E[tokens per round] of the page's variant and of the basic rule with as many drafts.

    Returns (variant's, basic's, drafted tokens per round). Basic: one
    candidate per position, K positions (a tree: a chain as long as it has nodes).
    """
    alpha = sc.acceptance_rate(p_target, q_draft)
    if variant == "tree":
        nodes = int(np.sum(np.cumprod(widths)))
        return (
            vt.tree_expected_tokens(p_target, q_draft, tuple(widths)),
            vt.chain_expected_tokens(p_target, q_draft, nodes),
            nodes,
        )
    basic = float(sc.expected_tokens(alpha, k))
    if variant == "multi_draft":
        return vr.multidraft_expected_tokens(p_target, q_draft, k, m), basic, k * m
    if variant == "typical_acceptance":
        return vr.typical_expected_tokens(p_target, q_draft, k, epsilon, delta), basic, k
    return basic, basic, k


def p_value_text(p_value: float) -> str:
    """chi2.sf underflows to 0 below about 1e-300: say so instead of printing 0."""
    return "< 1e-300" if p_value == 0 else f"{p_value:.3g}"


def histogram_tv(result: sc.SimulationResult, p_target) -> float:
    """TV(simulated share, p) = 1/2 sum_x |n(x)/n - p(x)| over every emitted token.

    What the token histogram shows: all tokens of all rounds, the token after K kept
    drafts included (typical acceptance takes that one as argmax p as well), so it can
    differ from the one-position law of :func:`emitted_law`.
    """
    counts = np.asarray(result.emitted_counts, dtype=np.float64)  # (V,)
    return vr.total_variation(counts / counts.sum(), p_target)
