"""specdec_core.lm.timing: lockstep CPU-time measurement and the physics check."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from specdec_core.errors import InvalidParameterError
from specdec_core.lm import encode_prompt, load_pair, speculative_generate
from specdec_core.lm.timing import (
    SpeedMeasurement,
    impossible_reasons,
    lockstep_runs,
    measure_speedup,
    predicted_speedup,
)


def fake(spec, plain, draft, *, k=3, rounds=10, n=20, parallel=True) -> SpeedMeasurement:
    return SpeedMeasurement(k, 0.0, n, parallel, spec, plain, draft, rounds, 14, 20, "fake")


def test_figures_follow_their_definitions():
    m = fake((1.0, 2.0, 1.0), (2.0, 2.0, 3.0), (0.2, 0.2, 0.2))
    assert m.speedups == (2.0, 1.0, 3.0) and m.speedup == 2.0 and m.spread == (1.0, 3.0)
    assert m.target_step == pytest.approx(2.0 / 20)
    assert m.c == pytest.approx(0.1)
    # v = (spec / rounds - K draft step) / target step = (0.1 - 3 * 0.01) / 0.1
    assert m.v == pytest.approx(0.7)
    assert m.tokens_per_round == 2.0 and m.acceptance_rate == pytest.approx(0.7)
    assert predicted_speedup(2.0, 3, 0.1, 1.0) == pytest.approx(2.0 / 1.3)


def test_physically_impossible_figures_are_refused_with_the_reason():
    fine = fake((1.0,), (1.2,), (0.1,), rounds=10, n=20)  # v = (0.1 - 0.015) / 0.06 > 1
    assert fine.v > 1 and impossible_reasons(fine) == []
    cheap_verify = fake((0.5,), (2.0,), (0.1,))  # v = (0.05 - 0.015) / 0.1 = 0.35
    assert any("v(K) = 0.35 < 1" in r for r in impossible_reasons(cheap_verify))
    # an n-gram target checks K + 1 positions with K + 1 lookups: no v >= 1 rule there,
    # but the speedup bound still holds
    assert not any(
        "v(K)" in r for r in impossible_reasons(fake((0.5,), (2.0,), (0.1,), parallel=False))
    )
    too_fast = fake((0.1,), (2.0,), (0.1,), parallel=False)  # 20x with 2 tokens per round
    assert any("above the most" in r for r in impossible_reasons(too_fast))
    assert impossible_reasons(fake((0.0,), (1.0,), (0.1,)))[0].startswith("a run took no")


def test_measure_uses_the_clock_it_is_given_and_counts_of_a_real_run():
    draft, target = load_pair("bigram-to-5gram")
    ids = encode_prompt(target.tokenizer, "The list")
    ticks = itertools.count()
    m = measure_speedup(
        (draft, target),
        ids,
        k=2,
        temperature=1.0,
        max_new_tokens=12,
        seed=4,
        repeats=2,
        clock=lambda: float(next(ticks)),
    )
    ref = speculative_generate(
        draft, target, ids, k=2, max_new_tokens=12, temperature=1.0, rng=np.random.default_rng(4)
    )
    assert (m.rounds, m.accepted, m.checked, m.n_tokens) == (
        ref.n_rounds,
        ref.accepted,
        ref.checked,
        12,
    )
    assert len(m.spec_s) == len(m.plain_s) == len(m.draft_s) == 2
    assert all(t >= 1 for t in m.spec_s + m.plain_s + m.draft_s)  # the fake clock advanced
    assert m.clock == "fake" or m.clock.endswith("<lambda>")
    assert not m.parallel_verify


def test_measure_with_thread_time_gives_a_finite_speedup_and_rejects_bad_repeats():
    draft, target = load_pair("trigram-to-gpt-4L")
    ids = encode_prompt(target.tokenizer, "Return the number of")
    m = measure_speedup((draft, target), ids, k=3, temperature=0.0, max_new_tokens=20, repeats=2)
    assert m.parallel_verify and all(t > 0 for t in m.spec_s + m.plain_s)
    assert 0 < m.speedup < 10 and m.clock == "time.thread_time"
    for bad in (0, 16, True, 2.0):
        with pytest.raises(InvalidParameterError, match="repeats"):
            measure_speedup(
                (draft, target), ids, k=3, temperature=0.0, max_new_tokens=5, repeats=bad
            )


def test_a_lockstep_pair_is_a_speculative_and_a_plain_run_of_the_same_seed():
    """What the benchmark times for every run: the two runs' own results (the same text as
    runs made alone with that seed) and each one's CPU time on its own thread."""
    pair = load_pair("lookup-table-to-gpt-4L")
    ids = encode_prompt(pair[1].tokenizer, "The list and the list and the")
    spec_s, plain_s, spec, plain = lockstep_runs(
        pair, ids, k=3, temperature=1.0, max_new_tokens=30, seed=5
    )
    alone = speculative_generate(
        *pair, ids, k=3, max_new_tokens=30, temperature=1.0, rng=np.random.default_rng(5)
    )
    assert spec.tokens == alone.tokens and spec.draft_sizes == alone.draft_sizes
    assert len(plain.tokens) == 30 and plain.kinds == ("target",) * 30
    assert spec_s > 0 and plain_s > 0
