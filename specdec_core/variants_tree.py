"""Token trees: verify a small tree of drafts node by node with the multi-draft rule.

SpecInfer (Miao et al., ASPLOS 2024, arXiv 2305.09781) drafts a TREE of
tokens and scores every node in one target pass (tree attention). Verifying
it walks from the root: at the current node, its children are the m
candidates of :func:`specdec_core.variants.multidraft_step` (tried in order,
residual update after each rejection); the walk moves into the kept child.
If every child is rejected, the node emits a sample of the last residual and
the round ends; a kept LEAF earns a bonus token from the target. Medusa and
EAGLE verify their own trees the same way.

Model used here (the seeds' simplification): the target and draft
distributions depend only on the depth, p_rows[d] and q_rows[d] for the
children of a node at depth d, and the bonus after a leaf at depth d comes
from p_rows[d]. Limits: depth 1..4, at most 4 children per node.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .distributions import position_rows
from .errors import InvalidParameterError
from .sampling import (
    FinalKind,
    acceptance_rate,
    sample_index,
)
from .variants import MultiDraftResult, multidraft_acceptance, multidraft_step

MAX_TREE_DEPTH = 4
MAX_BRANCHING = 4


@dataclass(frozen=True)
class DraftTree:
    """A token tree: node i has token ``tokens[i]`` and parent ``parents[i]`` (-1: the root).

    Nodes are numbered so that a parent comes before its children (any
    breadth-first order does); the root itself (the last verified token) is
    not a node. Shapes: ``parents`` and ``tokens`` are (N,).
    """

    parents: tuple[int, ...]
    tokens: tuple[int, ...]

    def __post_init__(self) -> None:
        """Structure checks: parents before children, depth <= 4, <= 4 children per node."""
        if len(self.parents) != len(self.tokens) or not self.tokens:
            raise InvalidParameterError(
                "tree: parents and tokens must be non-empty and equally long."
            )
        for i, parent in enumerate(self.parents):
            whole = isinstance(parent, (int, np.integer)) and not isinstance(parent, bool)
            if not whole or not -1 <= parent < i:
                raise InvalidParameterError(
                    f"tree: node {i} has parent {parent!r}; a parent must be -1 (the root) or an "
                    "earlier node."
                )
        if self.max_depth > MAX_TREE_DEPTH:
            raise InvalidParameterError(f"tree: depth {self.max_depth} > {MAX_TREE_DEPTH}.")
        widest = max(self.parents.count(node) for node in (-1, *range(len(self.tokens))))
        if widest > MAX_BRANCHING:
            raise InvalidParameterError(
                f"tree: a node has {widest} children; at most {MAX_BRANCHING}."
            )

    def children(self, node: int) -> tuple[int, ...]:
        """Children of ``node`` (-1 for the root), in the order they are tried."""
        return tuple(i for i, parent in enumerate(self.parents) if parent == node)

    def depth(self, node: int) -> int:
        """Depth of a node: 1 for a child of the root."""
        depth = 0
        while node != -1:
            node, depth = self.parents[node], depth + 1
        return depth

    @property
    def n_nodes(self) -> int:
        """Drafted tokens in the tree (what one target pass scores)."""
        return len(self.tokens)

    @property
    def max_depth(self) -> int:
        """Depth of the deepest node."""
        return max((self.depth(i) for i in range(self.n_nodes)), default=0)


def check_branching(branching: Sequence[int]) -> tuple[int, ...]:
    """Widths per level (b_1..b_D): D in 1..4, each b_d in 1..4."""
    try:
        widths = tuple(int(b) for b in branching)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"branching must be a list of whole numbers such as (3, 2), got {branching!r}."
        ) from None
    if not 1 <= len(widths) <= MAX_TREE_DEPTH:
        raise InvalidParameterError(
            f"branching has {len(widths)} levels; a tree has 1 to {MAX_TREE_DEPTH} levels."
        )
    for level, width in enumerate(widths, start=1):
        if not 1 <= width <= MAX_BRANCHING:
            raise InvalidParameterError(
                f"branching at level {level} is {width}; each node has 1 to {MAX_BRANCHING} "
                "children."
            )
    return widths


def _check_tokens(tree: DraftTree, v: int) -> None:
    for i, x in enumerate(tree.tokens):
        if not 0 <= x < v:
            raise InvalidParameterError(f"tree: node {i} has token {x}; ids run 0..{v - 1}.")


def _tree_rows(p_rows, q_rows, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """p as (V,) or (D+1, V); q as (V,) or (D, V) -> rows (D+1, V), (D, V)."""
    q_draft = position_rows(q_rows, "q", depth)  # (D, V)
    return position_rows(p_rows, "p", depth + 1, q_draft.shape[1]), q_draft


def draft_tree(q_rows, branching: Sequence[int], rng: np.random.Generator) -> DraftTree:
    """Draft a full tree: every node at depth d-1 gets b_d children x ~ q_d, i.i.d.

    q_rows: (V,) or (D, V). Candidates are drawn WITH replacement (SpecInfer's
    i.i.d. sampling), so siblings can repeat a token. Breadth-first order.
    """
    widths = check_branching(branching)
    q_draft = position_rows(q_rows, "q", len(widths))  # (D, V)
    parents: list[int] = []
    tokens: list[int] = []
    level = [-1]  # the nodes of the level being drafted under
    for depth, width in enumerate(widths):
        next_level = []
        for parent in level:
            for _ in range(width):
                parents.append(parent)
                tokens.append(int(sample_index(q_draft[depth], rng.random())))
                next_level.append(len(tokens) - 1)
        level = next_level
    return DraftTree(parents=tuple(parents), tokens=tuple(tokens))


@dataclass(frozen=True, eq=False)
class TreeResult:
    """One tree verified: the path walked and every node decision on the way."""

    tree: DraftTree
    node_steps: tuple[MultiDraftResult, ...]  # one multi-draft step per node visited
    path: tuple[int, ...]  # kept nodes, root to deepest
    final_kind: FinalKind  # "bonus" (a kept leaf) or "resample" (all children rejected)
    final_token: int
    emitted_tokens: tuple[int, ...]  # tokens of the path + the final token

    @property
    def n_emitted(self) -> int:
        """Tokens this round adds: len(path) + 1."""
        return len(self.emitted_tokens)


def verify_tree(
    p_rows,
    q_rows,
    tree: DraftTree,
    *,
    uniforms: Sequence[float] | None = None,
    rng: np.random.Generator | None = None,
) -> TreeResult:
    """Walk a token tree with the multi-draft rule at every node (SpecInfer).

    p_rows: (V,) or (D+1, V), q_rows: (V,) or (D, V), D = tree depth. At a
    node of depth d its children are tried with multidraft_step(p_rows[d],
    q_rows[d], children); the walk enters the kept child. All rejected: the
    step's residual sample ends the round. Kept leaf at depth d: bonus from
    p_rows[d]. ``uniforms`` are used in the order they are needed (coins and
    sampling uniforms alike); what is missing comes from ``rng``.
    """
    if not isinstance(tree, DraftTree):
        raise InvalidParameterError(f"tree must be a DraftTree, got {type(tree).__name__}.")
    p_arr, q_arr = _tree_rows(p_rows, q_rows, max(tree.max_depth, 1))
    _check_tokens(tree, q_arr.shape[1])
    source = _UniformSource(uniforms, rng)
    node, path, steps = -1, [], []
    while children := tree.children(node):
        depth = len(path)
        candidates = [tree.tokens[c] for c in children]
        steps.append(multidraft_step(p_arr[depth], q_arr[depth], candidates, rng=source))
        if steps[-1].kept_index is None:
            break
        node = children[steps[-1].kept_index]
        path.append(node)
    kind: FinalKind = "resample" if steps and steps[-1].kept_index is None else "bonus"
    if kind == "resample":
        final_token = steps[-1].emitted_token
    else:
        final_token = int(sample_index(p_arr[len(path)], source.random()))
    return TreeResult(
        tree=tree,
        node_steps=tuple(steps),
        path=tuple(path),
        final_kind=kind,
        final_token=final_token,
        emitted_tokens=tuple(tree.tokens[node] for node in path) + (final_token,),
    )


class _UniformSource:
    """Given uniforms first (checked to lie in [0, 1)), then ``rng``: duck-types .random()."""

    def __init__(self, uniforms: Sequence[float] | None, rng: np.random.Generator | None):
        self.coins = [float(u) for u in (uniforms or ())]
        for i, u in enumerate(self.coins, start=1):
            if not 0.0 <= u < 1.0:
                raise InvalidParameterError(f"uniforms: number {i} is {u!r}; they lie in [0, 1).")
        self.coins.reverse()
        self.rng = rng

    def random(self) -> float:
        """The next given uniform, else one from the rng (an error if there is none)."""
        if self.coins:
            return self.coins.pop()
        if self.rng is None:
            raise InvalidParameterError(
                "a uniform is needed but none is left in 'uniforms' and no rng was passed."
            )
        return float(self.rng.random())


# ---------------------------------------------------------------------------
# Expected tokens per round: tree against a chain of the same size
# ---------------------------------------------------------------------------


def tree_expected_tokens(p_rows, q_rows, branching: Sequence[int]) -> float:
    """E[tokens per round] of a full tree with widths b_1..b_D, children i.i.d. from q_d.

    E = 1 + sum_{d=1..D} prod_{j=1..d} beta_{b_j}(p_j, q_j), beta_m =
    :func:`multidraft_acceptance`: a node at depth j-1 keeps one of its b_j
    fresh i.i.d. children with probability beta_{b_j}, and the kept child's
    subtree is again fresh. Chain (all b = 1): the truncated geometric sum.
    """
    widths = check_branching(branching)
    p_arr, q_arr = _tree_rows(p_rows, q_rows, len(widths))
    betas = [multidraft_acceptance(p_arr[d], q_arr[d], width) for d, width in enumerate(widths)]
    return float(1.0 + np.cumprod(betas).sum())


def chain_expected_tokens(p, q, n_drafted: int) -> float:
    """A chain of ``n_drafted`` drafts with one p, q: (1 - alpha^(N+1)) / (1 - alpha).

    Leviathan et al. 2023, Eq. 1; the tree's fair comparison drafts as many
    tokens (same draft cost, same number of scored positions).
    """
    if isinstance(n_drafted, bool) or not isinstance(n_drafted, (int, np.integer)):
        raise InvalidParameterError(f"n_drafted must be a whole number, got {n_drafted!r}.")
    if not 1 <= n_drafted <= 4 ** (MAX_TREE_DEPTH + 1):
        raise InvalidParameterError(f"n_drafted = {n_drafted} is out of range.")
    alpha = acceptance_rate(p, q)
    return float(np.sum(alpha ** np.arange(int(n_drafted) + 1)))  # sum_{n=0..N} alpha^n


def parse_branching(text: str) -> tuple[int, ...]:
    """Typed tree widths, e.g. ``"3, 2"`` -> (3, 2): b_1 children of the root, b_2 under each.

    Whole numbers separated by commas or spaces; checked by :func:`check_branching`.
    """
    if not isinstance(text, str):
        raise InvalidParameterError(f"tree widths must be text, got {type(text).__name__}.")
    parts = text.replace(",", " ").split()
    if len(text) > 40 or not parts:
        raise InvalidParameterError(
            "tree widths: type 1 to 4 whole numbers such as 3, 2 (children per node, per level)."
        )
    for i, part in enumerate(parts, start=1):
        if not (part.isascii() and part.isdigit()):
            raise InvalidParameterError(
                f"tree widths: entry {i} ({part[:10]!r}) is not a whole number; use e.g. 3, 2."
            )
    return check_branching(int(part) for part in parts)
