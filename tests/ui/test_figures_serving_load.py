"""Figure builders of the Serving lab's "Under load" section: traces from the core's arrays,
the crossover and binding markers, gaps where a server cannot keep up, the text alternative."""

import numpy as np
import pytest

from specdec_core import serving as sv
from specdec_core import serving_load as sl
from specdec_ui.kit.chart_text import chart_text
from specdec_ui.serving import load_figures as lf

SETUP = sv.ServingSetup(
    sv.GPUS["4x-h100"], sv.TARGETS["llama-3.1-70b"], sv.DRAFTS["llama-3.2-1b"], 1_024
)
ACC = sv.Acceptance(4, alpha=0.75)
WORK = sl.Workload(512, 256)
SWEEP = sl.load_sweep(SETUP, ACC, WORK, sl.qps_grid(40, 24))
CROSS = sl.crossover_qps(SETUP, ACC, WORK, 40)


def _trace(fig, name):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


def test_latency_draws_both_servers_in_ms_with_gaps_the_rule_and_the_crossover():
    _, rule = sl.switch_off(SWEEP, 64)
    fig = lf.latency_figure(SWEEP, crossover=CROSS, rule=rule)
    plain = _trace(fig, lf.PLAIN_NAME)
    np.testing.assert_allclose(plain.x, SWEEP.qps)
    np.testing.assert_allclose(plain.y, 1e3 * SWEEP.plain_tpot_s)  # NaN where it cannot keep up
    spec = np.asarray(_trace(fig, lf.SPEC_NAME).y, dtype=float)
    assert np.isnan(spec[-1]) and not np.isnan(spec[0])
    np.testing.assert_allclose(_trace(fig, lf.RULE_NAME).y, 1e3 * rule)
    line = _trace(fig, "crossover QPS")
    assert list(line.x) == [CROSS, CROSS] and f"QPS {CROSS:.3g}" in line.text[1]
    assert fig.layout.xaxis.type == "log"
    text = chart_text(fig)
    assert f"Speculation stops paying from QPS {CROSS:.3g}." in text.summary
    assert text.rows[-1][2] == lf.OVERLOADED  # the table says so instead of "none"


def test_latency_without_a_crossover_or_a_rule_says_it_pays_everywhere():
    fig = lf.latency_figure(SWEEP, crossover=None)
    names = {t.name for t in fig.data}
    assert "crossover QPS" not in names and lf.RULE_NAME not in names
    assert "faster at every QPS shown" in chart_text(fig).summary


def test_throughput_rises_with_the_qps_and_flattens_at_each_capacity():
    fig = lf.throughput_figure(SWEEP)
    plain = np.asarray(_trace(fig, lf.PLAIN_NAME).y)
    spec = np.asarray(_trace(fig, lf.SPEC_NAME).y)
    assert plain.max() == pytest.approx(SWEEP.plain_capacity * 256)
    assert spec.max() == pytest.approx(SWEEP.spec_capacity * 256)
    assert np.all(np.diff(plain) >= 0) and spec[-1] < plain[-1]
    assert f"up to {SWEEP.plain_capacity:.3g} requests per second" in chart_text(fig).summary


def test_memory_draws_the_largest_batch_with_and_without_the_draft_and_where_it_binds():
    curve = sl.memory_curve(SETUP, WORK)
    fig = lf.memory_figure(curve, context=WORK.mean_context)
    np.testing.assert_array_equal(_trace(fig, "with the draft").y, curve.with_draft)
    np.testing.assert_array_equal(_trace(fig, "without the draft").y, curve.without_draft)
    assert list(_trace(fig, "max_num_seqs = 256").y) == [256, 256]
    binds = _trace(fig, "KV cache binds")
    assert list(binds.x) == [curve.binds_from] * 2
    marker = _trace(fig, "your requests' mean context")
    assert abs(marker.x[0] - WORK.mean_context) / WORK.mean_context < 0.15
    text = chart_text(fig).summary
    assert f"From {curve.binds_from:,} tokens the KV cache" in text
    assert "sequences without the draft" in text and "with it" in text


def test_memory_that_never_binds_says_so():
    curve = sl.MemoryCurve(
        np.array([256, 1024]), np.array([300, 300]), np.array([300, 300]), 8, None
    )
    fig = lf.memory_figure(curve, context=300)
    assert "KV cache binds" not in {t.name for t in fig.data}
    assert "never caps the batch below 8" in chart_text(fig).summary
