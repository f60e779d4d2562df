"""Token trees: the walk, expected tokens (closed form = enumeration), losslessness."""

import itertools

import numpy as np
import pytest

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core import variants_tree as vt

P3 = np.array([0.5, 0.3, 0.2])
Q3 = np.array([0.2, 0.2, 0.6])
A, B, C = range(3)


def test_worked_walk_reject_then_keep_then_bonus():
    """Tree: root -> nodes 0 (C), 1 (A); node 1 -> node 2 (B). p = [0.5, 0.3, 0.2], q = [0.2,
    0.2, 0.6] at every depth.
    Depth 0: child C: a = min(1, 0.2 / 0.6) = 1/3, coin 0.5 >= 1/3: rejected;
    p_2 = norm(max(0, p - q)) = norm([0.3, 0.1, 0]) = [0.75, 0.25, 0].
    Child A: a = min(1, 0.75 / 0.2) = 1, coin 0.9: kept -> walk into node 1.
    Depth 1: child B: a = min(1, 0.3 / 0.2) = 1, coin 0.9: kept -> node 2, a leaf.
    Bonus from p with uniform 0.6: CDF [0.5, 0.8, 1.0] -> B. Emitted: A, B, B (3 tokens)."""
    tree = vt.DraftTree(parents=(-1, -1, 1), tokens=(C, A, B))
    r = vt.verify_tree(P3, Q3, tree, uniforms=[0.5, 0.9, 0.9, 0.6])
    assert r.path == (1, 2)
    np.testing.assert_allclose(r.node_steps[0].targets[1], [0.75, 0.25, 0])
    assert (r.final_kind, r.emitted_tokens, r.n_emitted) == ("bonus", (A, B, B), 3)


def test_worked_walk_all_children_rejected():
    """Same tree; coins 0.5 (C rejected), then A kept (0.1), then at depth 1 B is kept with
    a = 1, so to see a rejection use a tree whose depth-1 child is C: a = 1/3, coin 0.95:
    rejected; residual [0.75, 0.25, 0], uniform 0.8 -> B. Emitted: A, B."""
    tree = vt.DraftTree(parents=(-1, -1, 1), tokens=(C, A, C))
    r = vt.verify_tree(P3, Q3, tree, uniforms=[0.5, 0.1, 0.95, 0.8])
    assert r.path == (1,)
    assert (r.final_kind, r.emitted_tokens) == ("resample", (A, B))


def _node_expected(p_rows, q_rows, tree, node: int, depth: int) -> float:
    """E[tokens emitted from here on | the walk is at ``node``], over coins and samples.

    Children c_1..c_m (tokens x_i) met with the residual chain p_1 = p_rows[depth]:
    a_i = min(1, p_i(x_i)/q(x_i)), P(keep c_i) = prod_{j<i}(1 - a_j) a_i;
    E = sum_i P(keep c_i) (1 + E(c_i)) + P(none) * 1; a leaf gives 1 (bonus).
    """
    children = tree.children(node)
    if not children:
        return 1.0
    p_i, reach, total = p_rows[depth], 1.0, 0.0
    for child in children:
        token = tree.tokens[child]
        a = float(sc.acceptance_probability(p_i[token], q_rows[depth, token]))
        total += reach * a * (1.0 + _node_expected(p_rows, q_rows, tree, child, depth + 1))
        reach *= 1.0 - a
        p_i = sc.residual_distribution(p_i, q_rows[depth])
    return total + reach


def _enumerated_expected_tokens(p, q, branching) -> float:
    """The reference for vt.tree_expected_tokens, by brute force: every drafted tree.

    sum over all token assignments of prod_nodes q_d(token) * E[tokens | that tree], with
    E[tokens | tree] by the recursion of :func:`_node_expected` (SpecInfer's rule).
    """
    depth = len(branching)
    p_rows = np.tile(p, (depth + 1, 1)) if np.ndim(p) == 1 else np.asarray(p)
    q_rows = np.tile(q, (depth, 1)) if np.ndim(q) == 1 else np.asarray(q)
    shape = vt.draft_tree(q_rows, branching, np.random.default_rng(0))
    depths = [shape.depth(i) - 1 for i in range(shape.n_nodes)]
    total = 0.0
    for tokens in itertools.product(range(q_rows.shape[1]), repeat=shape.n_nodes):
        weight = float(np.prod([q_rows[d, x] for d, x in zip(depths, tokens, strict=True)]))
        if weight > 0:
            tree = vt.DraftTree(shape.parents, tokens)
            total += weight * _node_expected(p_rows, q_rows, tree, -1, 0)
    return total


def test_expected_tokens_closed_form_matches_enumeration_and_chain():
    """Chain (1,): E = 1 + alpha = 1 + 0.6 = 1.6 (alpha = 0.2 + 0.2 + 0.2).
    Width 2: beta_2 = 1 - 0.4 * (1 - alpha_2), p_2 = [0.75, 0.25, 0], alpha_2 = 0.2 + 0.2 = 0.4
    -> beta_2 = 0.76, E = 1.76. Tree (2, 2): E = 1 + 0.76 + 0.76^2 = 2.3376."""
    assert vt.tree_expected_tokens(P3, Q3, (1,)) == pytest.approx(1.6)
    assert vt.tree_expected_tokens(P3, Q3, (2,)) == pytest.approx(1.76)
    assert vt.tree_expected_tokens(P3, Q3, (2, 2)) == pytest.approx(2.3376)
    for branching in [(1,), (2,), (3,), (2, 2), (3, 1), (1, 1, 1), (1, 2, 1)]:
        assert _enumerated_expected_tokens(P3, Q3, branching) == pytest.approx(
            vt.tree_expected_tokens(P3, Q3, branching), abs=1e-12
        )
    # a chain with as many drafted tokens (6 for (2, 2)) : (1 - 0.6^7) / 0.4 = 2.4300
    assert vt.chain_expected_tokens(P3, Q3, 6) == pytest.approx((1 - 0.6**7) / 0.4)
    assert vt.chain_expected_tokens(P3, Q3, 3) == pytest.approx(
        vt.tree_expected_tokens(P3, Q3, (1, 1, 1))
    )


def test_expected_tokens_with_depth_dependent_rows():
    p_rows = np.array([P3, [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]])
    q_rows = np.array([Q3, [0.3, 0.3, 0.4]])
    assert _enumerated_expected_tokens(p_rows, q_rows, (2, 1)) == pytest.approx(
        vt.tree_expected_tokens(p_rows, q_rows, (2, 1)), abs=1e-12
    )


def test_monte_carlo_tokens_per_round_matches_the_closed_form():
    rng = np.random.default_rng(3)
    n = 2000
    total = sum(
        vt.verify_tree(P3, Q3, vt.draft_tree(Q3, (2, 2), rng), rng=rng).n_emitted for _ in range(n)
    )
    assert abs(total / n - 2.3376) < 0.08  # 4 standard errors (sd ~0.8 / sqrt(2000))


def _first_tokens(rng, n, branching):
    counts = np.zeros((3, 3))  # (depth+1, V) tokens emitted at each position of the round
    for _ in range(n):
        tree = vt.draft_tree(Q3, branching, rng)
        for j, t in enumerate(vt.verify_tree(P3, Q3, tree, rng=rng).emitted_tokens):
            counts[j, t] += 1
    return counts


def _pooled_p_value(counts):
    fits = [sc.chi_square_test(row, P3) for row in counts if row.sum() > 0]
    from scipy.stats import chi2

    return chi2.sf(sum(f.statistic for f in fits), sum(f.dof for f in fits))


def test_tree_is_lossless_chi_square():
    """Every position of the round follows p (seeded, 4,000 rounds)."""
    counts = _first_tokens(np.random.default_rng(11), 4000, (2, 2))
    assert _pooled_p_value(counts) > 1e-3


def test_tree_without_residual_update_fails_the_same_test(monkeypatch):
    """Broken node rule: every child meets the ORIGINAL p (no residual update)."""

    def broken(p, q, candidates, *, uniforms=None, final_token=None, rng=None):
        for x in candidates:
            if rng.random() < vr.acceptance_probability(p[x], q[x]):
                return vr.MultiDraftResult(tuple(candidates), None, (p,), (), 0, x, None)
        token = int(sc.sample_index(sc.residual_distribution(p, q), rng.random()))
        return vr.MultiDraftResult(tuple(candidates), None, (p,), (), None, token, None)

    monkeypatch.setattr(vt, "multidraft_step", broken)
    counts = _first_tokens(np.random.default_rng(11), 3000, (2, 2))
    assert _pooled_p_value(counts) < 1e-6


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: vt.check_branching(()), "1 to 4 levels"),
        (lambda: vt.check_branching((2, 5)), "level 2 is 5"),
        (lambda: vt.check_branching((1, 1, 1, 1, 1)), "1 to 4 levels"),
        (lambda: vt.check_branching("ab"), "whole numbers"),
        (lambda: vt.verify_tree(P3, Q3, "tree"), "DraftTree"),
        (lambda: vt.DraftTree((0,), (A,)), "earlier node"),
        (lambda: vt.verify_tree(P3, Q3, vt.DraftTree((-1,), (5,))), "ids run"),
        (lambda: vt.DraftTree((-1,) * 5, (A,) * 5), "at most 4"),
        (lambda: vt.verify_tree(P3, Q3, vt.DraftTree((-1,), (A,)), uniforms=[1.5]), "[0, 1)"),
        (lambda: vt.verify_tree(P3, Q3, vt.DraftTree((-1,), (A,))), "no rng"),
    ],
)
def test_bad_trees_raise_named_errors(call, fragment):
    with pytest.raises(
        sc.InvalidParameterError, match=fragment.replace("[", r"\[").replace(")", r"\)")
    ):
        call()


def test_draft_tree_shape():
    tree = vt.draft_tree(Q3, (3, 2), np.random.default_rng(0))
    assert tree.n_nodes == 3 + 6 and tree.max_depth == 2
    assert [len(tree.children(n)) for n in (-1, 0, 1, 2)] == [3, 2, 2, 2]


@pytest.mark.parametrize(
    "text, widths", [("3, 2", (3, 2)), ("4", (4,)), (" 1 1 1 1 ", (1, 1, 1, 1))]
)
def test_parse_branching_reads_widths(text, widths):
    assert vt.parse_branching(text) == widths


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "type 1 to 4"),
        ("2, x", "entry 2"),
        ("2, -1", "entry 2"),
        ("5", "level 1 is 5"),
        ("1,1,1,1,1", "1 to 4 levels"),
        ("1" * 50, "type 1 to 4"),
    ],
)
def test_parse_branching_rejects_bad_text(text, fragment):
    with pytest.raises(sc.InvalidParameterError, match=fragment):
        vt.parse_branching(text)
