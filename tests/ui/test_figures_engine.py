"""The engines' numbers drawn: the per-position chart and vLLM's log line."""

import pytest

import specdec_core as sc
from specdec_core.engine_metrics import metrics_from_position_counts, metrics_from_rates
from specdec_ui.kit.engine_figures import ENGINE_WORDS, position_rates_figure, vllm_log_line


def test_the_log_line_is_the_one_vllm_prints_for_a_published_log():
    """llama.cpp's published rates 0.805, 0.632, 0.483: AL = 1 + 1.92 = 2.92 and
    (AL - 1) / K = 1.92 / 3 = 64.0 %."""
    line = vllm_log_line(metrics_from_rates([0.805, 0.632, 0.483]))
    assert line == (
        "SpecDecoding metrics: Mean acceptance length: 2.92, Per-position acceptance rate: "
        "0.805, 0.632, 0.483, Avg Draft acceptance rate: 64.0%"
    )


def test_counts_put_the_token_totals_in_the_line():
    line = vllm_log_line(metrics_from_position_counts([805, 632, 483], 1000))
    assert "Accepted: 1920 tokens, Drafted: 3000 tokens, " in line


def test_the_chart_shows_unconditional_bars_conditional_markers_and_the_fit():
    metrics = metrics_from_rates([0.8, 0.4, 0.1])
    bars, conditional, fit = position_rates_figure(metrics).to_plotly_json()["data"]
    assert list(bars["y"]) == [0.8, 0.4, 0.1]
    assert list(conditional["y"]) == pytest.approx([0.8, 0.5, 0.25])
    alpha = metrics.fitted_alpha  # 1.3 / (1.3 + 0.9)
    assert alpha == pytest.approx(1.3 / 2.2)
    assert list(fit["y"]) == pytest.approx([alpha, alpha**2, alpha**3])


def test_the_log_line_prints_vllms_rate_accepted_over_draft_tokens():
    """Rounds that drafted 2.4 tokens on average: vLLM prints 1,450 / 2,400 = 60.4 %, not
    (AL - 1) / K = 48.3 %, and "Drafted" is the counter, not rounds x K."""
    m = sc.metrics_from_vllm_counters(1_000, 2_400, 1_450, [700, 450, 300])
    line = vllm_log_line(m)
    assert "Accepted: 1450 tokens, Drafted: 2400 tokens" in line
    assert line.endswith("Avg Draft acceptance rate: 60.4%")
    assert "(AL − 1) / K when every round drafts K tokens" in ENGINE_WORDS
