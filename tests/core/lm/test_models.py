"""The numpy GPT (torch parity, cache, rollback) and the n-gram models."""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core import InvalidParameterError
from specdec_core.lm import ContextLengthError, GPTModel, NGramModel, load_pair
from specdec_core.lm.corpus import ASSETS
from specdec_core.lm.generate import probabilities
from specdec_core.lm.pairs import checked_asset

REFERENCE = np.load(ASSETS / "gpt_reference.npz")


@pytest.mark.parametrize("which", ["draft", "target", "draft_aligned"])
def test_numpy_logits_match_the_stored_torch_reference(which):
    # through the checksum check (pairs.SHA256) for the files listed there
    model = GPTModel.load(checked_asset(f"gpt_{which}.npz"))
    ids = REFERENCE["ids"].astype(np.int64)
    logits = model.extend(ids)  # (n, V) in one call
    assert logits.shape == REFERENCE[which].shape
    assert np.abs(logits - REFERENCE[which]).max() < 1e-4


def test_shipped_weights_are_float16_and_small():
    total = sum(p.stat().st_size for p in ASSETS.glob("gpt_*.npz"))
    assert total < 40e6
    with np.load(ASSETS / "gpt_target.npz") as data:
        assert data["wte"].dtype == np.float16


@pytest.fixture(scope="module")
def target():
    return load_pair("gpt-1L-to-gpt-4L")[1]


def test_block_call_equals_one_token_at_a_time(target):
    ids = REFERENCE["ids"][:20].astype(np.int64)
    a, b = target.fresh(), target.fresh()
    block = a.extend(ids)
    steps = np.concatenate([b.extend([t]) for t in ids])
    assert np.abs(block - steps).max() < 1e-4
    assert a.length == b.length == 20


@pytest.mark.parametrize("m", [2, 3, 5, 9])
def test_last_only_and_padded_blocks_give_the_rows_of_a_full_call(target, m):
    """last_only skips the last layer's other rows; 2+ rows are padded to a multiple of 4."""
    ids = REFERENCE["ids"][: 10 + m].astype(np.int64)
    full, last = target.fresh(), target.fresh()
    full.extend(ids[:10])
    last.extend(ids[:10])
    rows = full.extend(ids[10:])  # (m, V)
    one = last.extend(ids[10:], last_only=True)  # (1, V)
    assert rows.shape == (m, 512) and one.shape == (1, 512)
    assert np.abs(one - rows[-1:]).max() < 1e-4
    assert full.length == last.length == 10 + m
    singles = target.fresh()
    singles.extend(ids[:10])
    steps = np.concatenate([singles.extend([t]) for t in ids[10:]])  # one row per call
    assert np.abs(rows - steps).max() < 1e-4
    # the cache written by a last_only call serves the next call like a full one
    assert np.abs(full.extend([3]) - last.extend([3])).max() < 1e-4


def test_rollback_gives_the_same_distributions_as_a_fresh_prefill(target):
    ids = REFERENCE["ids"][:30].astype(np.int64)
    other = np.array([7, 99, 250, 3, 411])
    runner = target.fresh()
    runner.extend(ids[:20])
    runner.extend(other)  # rejected drafts
    runner.rollback(20)
    after = runner.extend(ids[20:30])
    fresh = target.fresh().extend(ids[:30])[20:]
    assert np.abs(after - fresh).max() < 1e-4
    assert np.array_equal(probabilities(after, 0.0), probabilities(fresh, 0.0))


def test_runners_share_weights_but_not_caches(target):
    a, b = target.fresh(), target.fresh()
    a.extend([1, 2, 3])
    assert b.length == 0 and target.length == 0
    with pytest.raises(ValueError):
        target.wte[0, 0] = 1.0  # the shared weights are read-only


def test_context_overflow_is_a_clear_error_not_an_index_error(target):
    runner = target.fresh()
    runner.extend(np.zeros(target.context_length - 2, dtype=np.int64))
    with pytest.raises(ContextLengthError, match="context of 256"):
        runner.extend([1, 2, 3])
    with pytest.raises(InvalidParameterError, match="cannot roll back to 255 tokens"):
        runner.rollback(runner.length + 1)


def test_ngram_witten_bell_on_a_toy_corpus():
    ids = np.array([0, 1, 2, 0, 1, 3, 0, 1, 2])
    model = NGramModel(ids, 3, 4)
    p = model.distribution([0, 1])
    # context (0, 1) was followed by 2 twice and 3 once: lambda = 3 / (3 + 2)
    lam3 = 3 / 5
    lower = model.distribution([1])  # the bigram distribution after 1
    expected = (1 - lam3) * lower
    expected[2] += lam3 * 2 / 3
    expected[3] += lam3 * 1 / 3
    assert np.allclose(p, expected)
    assert np.isclose(p.sum(), 1.0) and (p > 0).all()


def test_ngram_extend_and_rollback():
    ids = np.random.default_rng(0).integers(0, 16, 500)
    model = NGramModel(ids, 5, 16).fresh()
    rows = model.extend([1, 2, 3, 4])
    assert rows.shape == (4, 16)
    assert np.allclose(np.exp(rows).sum(axis=1), 1.0)
    model.rollback(2)
    again = model.extend([3, 4])
    assert np.allclose(again, rows[2:])
    with pytest.raises(InvalidParameterError, match="allowed: 0 to 4"):
        model.rollback(5)
    with pytest.raises(InvalidParameterError, match="order"):
        NGramModel(ids, 0, 16)


def test_ngram_row_cache_is_exact_per_runner_and_bounded(monkeypatch):
    """Cached rows equal a fresh computation; each runner starts cold; the cache is bounded."""
    from specdec_core.lm import ngram

    rng = np.random.default_rng(0)
    ids = rng.integers(0, 16, size=4000)
    model = NGramModel(ids, 3, 16)
    runner = model.fresh()
    history = [int(t) for t in rng.integers(0, 16, size=300)]
    rows = runner.extend(history)  # (300, 16); contexts repeat, so rows come from the cache
    expected = np.log(np.stack([model.distribution(history[: i + 1]) for i in range(300)]))
    np.testing.assert_array_equal(rows, expected)
    assert 0 < len(runner._log_rows) < 300  # at most 16 * 16 contexts of two tokens
    assert model.fresh()._log_rows == {}  # a new generation starts with an empty cache
    with pytest.raises(ValueError):
        runner._log_rows[next(iter(runner._log_rows))][0] = 0.0  # cached rows are read-only
    monkeypatch.setattr(ngram, "LOG_ROW_CACHE", 8)
    small = model.fresh()
    small.extend(history)
    assert len(small._log_rows) == 8
