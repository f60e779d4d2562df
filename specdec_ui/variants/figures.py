"""Figures of the Variants lab.

Pure functions of core results (and of p, q): they return plotly figures and never read
widgets. The lab's presets are in :mod:`specdec_ui.presets`; its rows of rules and the
decisions in words are in :mod:`specdec_ui.variants.table`, its verdict and CSV in
:mod:`specdec_ui.losslessness.verdict`.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core import variants_tree as vt
from specdec_ui.kit.chart_text import listing, text_meta
from specdec_ui.kit.text import plotly_escape
from specdec_ui.kit.theme import (
    COLORS,
    OUTLINE,
    PATTERN,
    STATUS_SYMBOL,
    STATUS_WORD,
    draft_markers,
    make_figure,
)
from specdec_ui.variants.limits import VARIANT_M_MAX

MAX_TREE_HEIGHT = 1_000  # px: a 340-node tree is drawn, not read node by node
MIN_TREE_HEIGHT = 380  # px: room for a legend of two rows over a small tree's leaves


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
        meta=_tree_text(result, shown, labels, status),
        height=min(max(MIN_TREE_HEIGHT, 40 * tree.n_nodes), MAX_TREE_HEIGHT),
        xaxis={"title": {"text": "depth"}, "dtick": 1, "range": [-0.4, tree.max_depth + 1.6]},
        yaxis={"visible": False},
    )


def _tree_text(result: vt.TreeResult, shown: int, labels, status: dict[int, str]) -> dict:
    """The tree in words (its decisions so far, the emitted tokens at the end) and its nodes
    as a table: depth, the token it follows, its token, its status."""
    tree = result.tree
    rows = []
    for i in range(tree.n_nodes):
        parent = tree.parents[i]
        after = "root" if parent < 0 else labels[tree.tokens[parent]]
        word = STATUS_WORD[status.get(i, "pending")]
        rows.append((tree_depth(tree, i), after, labels[tree.tokens[i]], word))
    decided = {w: [r[2] for r in rows if r[3] == w] for w in ("kept", "rejected")}
    said = "; ".join(f"{w}: {listing(t)}" for w, t in decided.items() if t) or "none yet"
    summary = (
        f"{plain_title(_tree_title(result, shown, labels))}. A drafted tree of {tree.n_nodes} "
        f"tokens, {tree.max_depth} deep. Decided so far: {said}."
    )
    if shown >= len(result.node_steps):
        kind = STATUS_WORD[sc.FINAL_STATUS[result.final_kind]]
        summary += f" Last token ({kind}): {labels[result.final_token]}."
    return text_meta(summary, ("depth", "after", "token", "status"), rows)


def tree_depth(tree: vt.DraftTree, node: int) -> int:
    """1 for a child of the root, 2 for its children, and so on."""
    depth = 1
    while tree.parents[node] >= 0:
        node, depth = tree.parents[node], depth + 1
    return depth


def plain_title(title: str) -> str:
    """A title built with escaped labels, as the words a student typed."""
    return html.unescape(title)


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
    column = result.tree.max_depth + 1  # right of every drafted node: never on a child
    return {
        "type": "scatter",
        "mode": "lines+markers+text",
        "x": [x, column],
        "y": [y, y],
        "line": {"color": COLORS[kind], "width": 2, "dash": "dot"},  # from the node it follows
        "name": f"{STATUS_SYMBOL[kind]} {STATUS_WORD[kind]} token",
        "text": ["", plotly_escape(labels[result.final_token])],
        "textposition": "middle right",
        "marker": {
            "size": [0, 24],
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


def candidates_figure(p_target, q_draft, k: int, m_current: int, m_max: int = VARIANT_M_MAX):
    """Tokens per round against the number of candidates m (1..m_max), K positions.

    Two panels over one m axis: "E[tokens], m candidates" (line + markers: sum_i
    beta_m^i) on top, "beta_m" (0 to 1) below, "you are here" (the current m). One panel
    with a second y axis drew the two rising curves on top of each other, with ticks at
    0.266 and 0.532 (issue 25).
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
        height=460,
        xaxis={"title": {"text": "candidates per position m"}, "dtick": 1},
        yaxis={"title": {"text": "tokens per round"}, "rangemode": "tozero", "domain": [0.45, 1]},
        yaxis2={
            "title": {"text": "beta_m"},
            "anchor": "x",
            "domain": [0, 0.32],
            "range": [0, 1.05],
            "tickvals": [0, 0.5, 1],
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


def strict_rules_figure(p_target, q_draft, labels, *, alpha: float, beta: float) -> go.Figure:
    """P(keep x | x drafted) under each rule, token by token: min(1, p/q) against p(x).

    Traces: "probabilistic: min(1, p/q)" and "strict: p(x)" bars, q as open circles.
    Averaged over x ~ q they give alpha = sum min(p, q) and beta = sum p q.
    """
    x = _x(labels)
    p_target, q_draft = np.asarray(p_target, float), np.asarray(q_draft, float)
    ratio = np.divide(p_target, q_draft, out=np.ones_like(p_target), where=q_draft > 0)
    traces = [
        {
            "type": "bar",
            "x": x,
            "y": np.minimum(1.0, ratio),
            "name": "probabilistic: keep with min(1, p/q)",
            "marker": {"color": COLORS["accepted"]},
        },
        {
            "type": "bar",
            "x": x,
            "y": p_target,
            "name": "strict: keep when y ~ p equals it, p(x)",
            "marker": {"color": COLORS["p"], "pattern": {"shape": "/"}},
        },
        draft_markers(x, q_draft, name="draft q (how often x is drafted)"),
    ]
    return make_figure(
        traces,
        title=f"Keep a drafted x? On average α = {alpha:.3f} against β = {beta:.3f}",
        yaxis={"title": {"text": "probability"}, "range": [0, 1.05]},
    )


def strict_sample_figure(p_target, step: vr.MatchStep, labels) -> go.Figure:
    """The target's own sample y ~ p (outlined), the draft x marked: kept iff y == x."""
    x = _x(labels)
    p_target = np.asarray(p_target, float)
    outline = [3 if i == step.sampled else 0 for i in range(p_target.size)]
    traces = [
        {
            "type": "bar",
            "x": x,
            "y": p_target,
            "name": "target p: y is drawn from it",
            "marker": {"color": COLORS["p"], "line": {"width": outline, "color": OUTLINE}},
        },
        {
            "type": "scatter",
            "x": [x[step.token]],
            "y": [float(p_target[step.token])],
            "mode": "markers",
            "name": "the draft x",
            "marker": {"symbol": "triangle-down", "size": 18, "color": COLORS["q"]},
        },
    ]
    verdict = "equal: keep x" if step.accepted else f"differ: emit y = {x[step.sampled]}"
    return make_figure(
        traces,
        title=f"u = {step.coin:.3f} draws y = {x[step.sampled]}; x = {x[step.token]}: {verdict}",
        yaxis={"title": {"text": "probability"}, "rangemode": "tozero"},
    )


def strict_length_figure(alpha: float, beta: float, k_max: int, k_now: int) -> go.Figure:
    """Expected tokens per round against K: E(alpha, K) (probabilistic) and E(beta, K)."""
    ks = np.arange(1, k_max + 1)
    traces = [
        {
            "type": "scatter",
            "x": ks,
            "y": [float(sc.expected_tokens(alpha, k)) for k in ks],
            "mode": "lines+markers",
            "name": f"probabilistic, α = {alpha:.3f}",
            "line": {"color": COLORS["accepted"], "width": 3},
        },
        {
            "type": "scatter",
            "x": ks,
            "y": [float(sc.expected_tokens(beta, k)) for k in ks],
            "mode": "lines+markers",
            "name": f"strict, β = {beta:.3f}",
            "line": {"color": COLORS["p"], "width": 3, "dash": "dash"},
        },
        _current_choice(k_now, float(sc.expected_tokens(beta, k_now)), f"K = {k_now}"),
    ]
    return make_figure(
        traces,
        title="Tokens per round: E(α, K) against E(β, K)",
        xaxis={"title": {"text": "K (draft positions)"}, "dtick": 1},
        yaxis={"title": {"text": "expected tokens per round"}, "rangemode": "tozero"},
    )


def round_numbers_figure(numbers: dict, shown: int, drafted_labels, names: dict) -> go.Figure:
    """A rule's own numbers for the positions decided so far (1..shown of a whole round):
    one group of bars per number (``numbers``: symbol -> (K,); ``names``: symbol -> words)."""
    positions = [f"{i + 1}: {plotly_escape(lab)}" for i, lab in enumerate(drafted_labels)]
    palette = [COLORS["p"], COLORS["accepted"], COLORS["resampled"], COLORS["q"]]
    hatching = list(PATTERN.values())
    traces = []
    for i, (symbol, values) in enumerate(numbers.items()):
        y = [float(v) if j < shown else None for j, v in enumerate(values)]
        traces.append(
            {
                "type": "bar",
                "x": positions,
                "y": y,
                "name": plotly_escape(names.get(symbol, symbol)),
                "marker": {
                    "color": palette[i % len(palette)],
                    "pattern": {"shape": hatching[i % len(hatching)]},
                },
            }
        )
    said = "; ".join(
        f"{names.get(s, s)}: " + ", ".join(f"{float(v):.3f}" for v in values[:shown])
        for s, values in numbers.items()
    )
    return make_figure(
        traces,
        title=f"The rule's numbers, positions 1 to {shown} of {len(positions)}",
        barmode="group",
        xaxis={"title": {"text": "drafted position: token"}},
        yaxis={"title": {"text": "value"}, "range": [0, 1.05]},
        meta=text_meta(f"Positions decided so far. {said}." if shown else "No position yet."),
    )


def tokens_by_k_figure(ks, ours, basic, k_now: int, name: str) -> go.Figure:
    """Expected tokens per round against K: a rule's (``ours``) and the token-by-token
    rule's E(alpha, K) (``basic``), both (len(ks),)."""
    traces = [
        {
            "type": "scatter",
            "x": list(ks),
            "y": [float(x) for x in basic],
            "mode": "lines+markers",
            "name": "token by token, E(α, K)",
            "line": {"color": COLORS["accepted"], "width": 3},
        },
        {
            "type": "scatter",
            "x": list(ks),
            "y": [float(x) for x in ours],
            "mode": "lines+markers",
            "name": plotly_escape(name),
            "line": {"color": COLORS["p"], "width": 3, "dash": "dash"},
        },
        _current_choice(k_now, float(ours[list(ks).index(k_now)]), f"K = {k_now}"),
    ]
    at = list(ks).index(k_now)
    return make_figure(
        traces,
        title="Tokens per round against K: this rule and token by token",
        xaxis={"title": {"text": "K (draft positions)"}, "dtick": 1},
        yaxis={"title": {"text": "expected tokens per round"}, "rangemode": "tozero"},
        meta=text_meta(
            f"At K = {k_now} this rule expects {float(ours[at]):.3f} tokens per round, the "
            f"token-by-token rule {float(basic[at]):.3f}; at K = {ks[-1]}: "
            f"{float(ours[-1]):.3f} against {float(basic[-1]):.3f}."
        ),
    )
