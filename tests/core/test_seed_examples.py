"""Every number of both seeds, reproduced by SCENARIOS + verify_round + theory.

Seed 000 = "Worked Example: Step-by-Step Round"; seed 003 = "Worked examples",
cells A to I. Expected values are the seeds' own printed numbers.
"""

import numpy as np
import pytest

import specdec_core as sc

ROUND_KEYS = [k for k, s in sc.SCENARIOS.items() if s.kind == "round"]


def replay(key: str) -> sc.RoundResult:
    s = sc.SCENARIOS[key]
    p_rows, q_rows = s.arrays()
    return sc.verify_round(
        p_rows, q_rows, s.draft_tokens, uniforms=s.coins, final_token=s.final_token
    )


def test_every_seed_cell_is_covered():
    cells = {s.cell for s in sc.SCENARIOS.values() if s.cell}
    assert cells == set("ABCDEFGHI")
    sources = {s.source.split(",")[0] for s in sc.SCENARIOS.values()}
    assert sources == {"000", "003"}


@pytest.mark.parametrize("key", ROUND_KEYS)
def test_round_scenarios_replay_to_their_expected_outcome(key):
    s = sc.SCENARIOS[key]
    result = replay(key)
    exp = s.expected
    assert result.final_kind == exp["final_kind"]
    if "n_accepted" in exp:
        assert result.n_accepted == exp["n_accepted"]
    if "n_emitted" in exp:
        assert result.n_emitted == exp["n_emitted"]
    if "emitted" in exp:
        assert tuple(s.labels[t] for t in result.emitted_tokens) == exp["emitted"]
    if "acceptance_probabilities" in exp:
        got = [st.acceptance_probability for st in result.steps]
        assert got == pytest.approx(exp["acceptance_probabilities"], abs=5e-4)
    if "ratios" in exp:
        assert [st.ratio for st in result.steps] == pytest.approx(exp["ratios"])
    if "residual_unnormalised" in exp:
        assert result.residual_unnormalised == pytest.approx(
            exp["residual_unnormalised"], abs=1e-12
        )
    if "residual" in exp:
        assert result.final_distribution == pytest.approx(exp["residual"], abs=5e-3)


def test_seed_000_happy_path_numbers():
    result = replay("000-round")
    a, b, c = result.steps
    assert (a.p_x, a.q_x, a.acceptance_probability) == (0.40, 0.30, 1.0)
    assert round(a.ratio, 2) == 1.33
    assert round(b.acceptance_probability, 3) == 0.833
    assert b.coin == 0.72 and b.accepted  # "0.72, which is less than 0.833"
    assert round(c.ratio, 2) == 1.33 and c.acceptance_probability == 1.0
    assert result.final_kind == "bonus" and result.final_token == 3  # D, p(D) = 0.10
    assert result.final_distribution[3] == pytest.approx(0.10)
    assert result.n_emitted == 4  # "4 tokens [A, B, C, D] from a single target pass"


def test_seed_000_rejection_numbers():
    assert round(sc.acceptance_probability(0.10, 0.30), 3) == 0.333  # as the seed states
    p = [0.40, 0.25, 0.20, 0.10, 0.05]
    q = [0.30, 0.30, 0.15, 0.15, 0.10]
    assert np.maximum(0, np.subtract(p, q)) == pytest.approx([0.10, 0, 0.05, 0, 0])
    assert sc.residual_distribution(p, q) == pytest.approx([2 / 3, 0, 1 / 3, 0, 0])
    assert np.round(sc.residual_distribution(p, q), 2).tolist() == [0.67, 0, 0.33, 0, 0]
    stated = replay("000-rejection-pb010")
    assert stated.steps[1].coin == 0.65 and not stated.steps[1].accepted
    assert stated.discarded_positions == (2,)


def test_seed_000_inconsistency_is_recorded():
    note = sc.SCENARIOS["000-rejection"].note
    assert "inconsistent" in note and "0.15" in note and "0.20" in note


def test_cell_b_discards_the_attractive_draft():
    result = replay("003-B")
    s = sc.SCENARIOS["003-B"]
    assert result.discarded_positions == (3,)
    assert s.p_rows[3][s.draft_tokens[3]] == s.expected["discarded_p"] == 0.9
    assert result.n_emitted == 3  # i + 1 with i = 2


def test_cell_c_perfect_draft():
    s = sc.SCENARIOS["003-C"]
    p_rows, q_rows = s.arrays()
    assert sc.acceptance_rate(p_rows[0], q_rows[0]) == 1.0
    assert sc.expected_tokens(1.0, s.k_drafts) == 6.0
    assert replay("003-C").n_emitted == 6
    # The residual has zero mass: the documented fallback is p, never NaN.
    assert sc.residual_distribution(p_rows[0], q_rows[0]) == pytest.approx(p_rows[0])


def test_cell_d_forbidden_token():
    assert sc.acceptance_probability(0.0, 0.4) == 0.0
    result = replay("003-D")
    assert result.final_distribution[3] == 0.0  # max(0, 0 - 0.4) = 0: fully purged
    # Whatever the coin, a = 0 rejects.
    s = sc.SCENARIOS["003-D"]
    p_rows, q_rows = s.arrays()
    for u in (0.0, 1e-12, 0.5, 0.999999):
        r = sc.verify_round(p_rows, q_rows, s.draft_tokens, uniforms=[u], final_token=0)
        assert r.n_accepted == 0


def test_cell_e_cap_holds():
    assert 0.8 / 0.01 == pytest.approx(80)
    assert sc.acceptance_probability(0.8, 0.01) == 1.0
    assert sc.acceptance_probability(0.8, 1e-300) == 1.0
    assert sc.acceptance_probability(0.8, 0.0) == 1.0  # the limit q -> 0+


def test_cell_f_resample_distribution():
    p, q = [0.5, 0.2, 0.3], [0.1, 0.6, 0.3]
    assert np.subtract(p, q) == pytest.approx([0.4, -0.4, 0.0])
    assert sc.residual_mass(p, q) == pytest.approx(0.4)
    assert sc.residual_distribution(p, q) == pytest.approx([1.0, 0.0, 0.0])


def test_cell_g_limits():
    assert sc.speedup(1.0, 4, 0.0, 10.0) == 5.0
    assert sc.speedup(0.0, 4, 0.0, 10.0) == 1.0
    assert sc.expected_tokens(1 - 1e-9, 4) == pytest.approx(5.0, abs=1e-6)
    assert sc.expected_tokens(1e-9, 4) == pytest.approx(1.0, abs=1e-6)


def test_cell_h_latency_budget():
    s = sc.SCENARIOS["003-H"]
    ks = np.array(s.k_values)
    cost = ks * s.c_q + s.c_p
    assert cost.tolist() == [50.0, 60.0, 80.0]
    e = sc.expected_tokens(s.alpha, ks)
    assert round(e[0], 2) == 2.19 and round(e[1], 4) == 2.7731 and round(e[2], 4) == 3.1988
    ms = sc.time_per_token(s.alpha, ks, s.c_q, s.c_p)
    assert np.round(ms, 2).tolist() == [22.83, 21.64, 25.01]
    assert int(ks[np.argmin(ms)]) == 4
    assert sc.optimal_k(s.alpha, s.c_q, s.c_p, k_max=16) == 4  # also the best of all K
    assert round(s.c_p / ms[1], 2) == 1.85
    assert round(sc.speedup(s.alpha, 4, s.c_q, s.c_p), 2) == 1.85


def test_cell_i_rank_is_not_ratio():
    assert round(sc.acceptance_probability(0.4, 0.9), 3) == 0.444
    result = replay("003-I")
    assert result.final_distribution[0] == 0.0  # the shared top-1 gets no resample mass


def test_self_test_answers():
    assert sc.acceptance_probability(0.3, 0.2) == 1.0
    assert sc.residual_distribution([0.3, 0.7], [0.5, 0.5])[0] == 0.0
    assert sc.speedup(0.0, 4, 1.0, 10.0) == pytest.approx(10 / 14)
    assert len(sc.SELF_TEST) == 4


def test_leviathan_table_4_rows():
    off = 0
    for row in sc.PUBLISHED_SPEEDUPS:
        formula = sc.speedup(row["alpha"], row["k"], row["c"], 1.0)
        diff = abs(round(formula, 1) - row["expected"])
        assert diff <= 0.1 + 1e-9, row
        off += diff > 1e-9
    assert off == 3  # "three rows differ by 0.1 from the formula on these rounded inputs"
