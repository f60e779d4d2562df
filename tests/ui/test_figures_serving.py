"""Figure and table builders of the Serving lab: traces, values, markers, labels, escaping."""

import numpy as np
import pytest

from specdec_core import serving as sv
from specdec_core import serving_measured as sm
from specdec_core import serving_published as sp
from specdec_ui.serving import figures as serving_figures

SETUP = sv.ServingSetup(
    sv.GPUS["4x-h100"], sv.TARGETS["llama-3.1-70b"], sv.DRAFTS["llama-3.2-1b"], 1_024
)
SERVER = sv.ServerCosts("this server", 4, 400e-6, 0.2, 1.6)


def _sweep(alpha=0.75, k=4, setup=SETUP):
    grid = np.union1d(sv.batch_grid(sv.max_batch(setup), 30), [8, 64])
    return sv.batch_sweep(setup, sv.Acceptance(k, alpha=alpha), grid)


def _trace(fig, name):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


def test_speedup_vs_batch_draws_the_core_curve_best_k_and_break_even():
    sweep = _sweep()
    be = sv.break_even_batch(SETUP, sweep.acceptance)
    fig = serving_figures.speedup_vs_batch_figure(
        sweep, break_even=be, current=(64, 2.5), server=SERVER
    )
    curve = _trace(fig, "speedup, K = 4")
    np.testing.assert_array_equal(curve.x, sweep.batch)
    np.testing.assert_allclose(curve.y, sv.serving_speedup(SETUP, 0.75, 4, sweep.batch))
    best = _trace(fig, "best K")
    np.testing.assert_array_equal(best.customdata, sv.best_k(SETUP, 0.75, sweep.batch))
    assert np.all(np.asarray(best.y) >= np.asarray(curve.y) - 1e-12)
    line = _trace(fig, "break-even batch")
    assert list(line.x) == [be, be] == [133, 133] and line.text[1] == "break-even b = 133"
    assert line.textposition == "top left"  # far from the left edge: the label left of it
    assert list(_trace(fig, "your batch").x) == [64]
    server = _trace(fig, serving_figures.SERVER_NAME)
    assert list(server.x) == [1] and server.y[0] == pytest.approx(SERVER.speedup(0.75))
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.shapes[0].y0 == 1.0  # the no-gain line


@pytest.mark.parametrize(
    "costs", [(0.2, 1.6), (0.35, 1.6), (0.3, 2.0), (0.9, 3.5)]
)  # 1.27x, 1.02x, 0.95x, 0.43x
def test_the_servers_label_and_no_gain_sit_on_opposite_sides_of_the_line_at_1(costs):
    server = sv.ServerCosts("this server, tiny GPT pair", 4, 400e-6, *costs)
    sweep = _sweep()
    fig = serving_figures.speedup_vs_batch_figure(sweep, break_even=None, server=server)
    value = server.speedup(0.75)
    marker = _trace(fig, serving_figures.SERVER_NAME)
    no_gain = next(a for a in fig.layout.annotations if a.text == "no gain (1x)")
    above = value >= 1
    assert marker.textposition == ("top right" if above else "bottom right"), value
    assert no_gain.yanchor == ("top" if above else "bottom"), value  # the other side


def test_a_break_even_batch_near_the_left_edge_is_labelled_to_its_right():
    sweep = _sweep()
    fig = serving_figures.speedup_vs_batch_figure(sweep, break_even=2, current=None)
    assert _trace(fig, "break-even batch").textposition == "top right"  # not cut at the edge


def test_a_round_slower_at_every_batch_has_a_note_not_a_break_even_line_at_1():
    slow = sv.ServingSetup(
        SETUP.hardware, SETUP.target, sv.DraftSpec("slow", fixed_c=0.9), SETUP.context
    )
    sweep = _sweep(setup=slow)
    assert sv.break_even_batch(slow, sweep.acceptance) == 1
    fig = serving_figures.speedup_vs_batch_figure(sweep, break_even=1)
    assert "break-even batch" not in {t.name for t in fig.data}
    notes = [a.text for a in fig.layout.annotations]
    assert serving_figures.SLOWER_EVERYWHERE in notes


def test_speedup_vs_batch_without_break_even_or_server_has_no_such_traces():
    fig = serving_figures.speedup_vs_batch_figure(_sweep(alpha=0.95), break_even=None)
    names = {t.name for t in fig.data}
    assert "break-even batch" not in names and serving_figures.SERVER_NAME not in names
    assert "your batch" not in names


def test_a_tree_with_a_measured_tau_has_no_best_k_curve():
    grid = sv.batch_grid(sv.max_batch(SETUP), 20)
    sweep = sv.batch_sweep(SETUP, sv.Acceptance(5, tau=4.0, verified=32), grid)
    fig = serving_figures.speedup_vs_batch_figure(sweep, break_even=None)
    assert {t.name for t in fig.data} == {"speedup, tau 4.00 of 32 verified"}
    assert fig.layout.title.text == "Speedup vs batch size (tau 4.00 of 32 verified)"


def test_verify_cost_figure_has_one_curve_per_token_count_and_the_ceiling():
    batch = sv.batch_grid(sv.max_batch(SETUP), 25)
    v_by = {m: sv.verify_step(SETUP, m, batch) / sv.plain_step(SETUP, batch) for m in (2, 3, 5, 9)}
    cb = sv.compute_bound_batch(SETUP, 5)
    fig = serving_figures.verify_cost_figure(
        batch, v_by, current=5, compute_bound=cb, server=SERVER
    )
    for m in (2, 3, 5, 9):
        np.testing.assert_allclose(_trace(fig, f"{m} tokens").y, v_by[m])
    np.testing.assert_allclose(v_by[5], sv.verify_cost(SETUP, 4, batch))
    assert _trace(fig, "5 tokens").line.width == 4 and _trace(fig, "2 tokens").line.width == 2
    ceiling = _trace(fig, "ceiling: as many plain steps as tokens")
    assert list(ceiling.y) == [5, 5] and ceiling.text[-1] == "ceiling 5"
    assert list(_trace(fig, "compute-bound from here").x) == [cb, cb] == [45, 45]
    assert _trace(fig, serving_figures.SERVER_NAME).y[0] == 1.6


def test_throughput_latency_curves_are_b_over_latency_per_chip():
    sweep = _sweep()
    fig = serving_figures.throughput_latency_figure(
        sweep, server=SERVER, hardware_label="4 x H100 <b>"
    )
    plain = _trace(fig, "no speculation")
    spec = _trace(fig, "with speculation (K = 4)")
    np.testing.assert_allclose(plain.x, 1e3 * sweep.plain_s)
    np.testing.assert_allclose(plain.y, sweep.batch / sweep.plain_s / 4)
    np.testing.assert_allclose(np.asarray(spec.x) * sweep.speedup, plain.x)
    labels = _trace(fig, "no speculation, batches").text
    assert list(labels) == ["b=1", "b=8", "b=64", "b=477"]  # 512 does not fit: the largest
    ms = 1e3 * SERVER.step_s
    assert _trace(fig, "this server, plain").x[0] == pytest.approx(ms)
    fast = _trace(fig, "this server, speculative")
    assert fast.x[0] == pytest.approx(ms / SERVER.speedup(0.75))
    assert "&lt;b&gt;" in fig.layout.title.text and "<b>" not in fig.layout.title.text
    ticks = list(fig.layout.xaxis.tickvals)
    assert ticks == sorted(ticks) and {10.0, 20.0} <= set(ticks)  # 1-2-5 on the log axis


def test_log_ticks_are_1_2_5_around_the_range():
    assert serving_figures.log_ticks(0.7, 30.0) == [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
    assert serving_figures.log_ticks(100.0, 100.0) == [100.0, 200.0]


def test_published_table_has_the_error_of_each_row_and_the_display_has_no_none():
    rows = sp.published_checks()
    table = serving_figures.published_table(rows)
    assert len(table) == len(rows)
    assert list(table.columns) == list(serving_figures.PUBLISHED_COLUMNS.values())
    np.testing.assert_allclose(table["model − published"], [r.error for r in rows])
    np.testing.assert_allclose(table["signed error (%)"], [100 * r.relative_error for r in rows])
    assert table.loc[0, "published"] == 3.4 and table.loc[0, "c (source)"] == 0.02
    shown = serving_figures.published_display(rows)
    assert list(shown["published"][:2]) == ["3.40x", "2.80x"]
    assert shown.loc[8, "published"] == "14.10 ms" and shown.loc[14, "published"] == "244 tokens/s"
    assert shown.loc[7, "role"] == "circular: left out"
    roles = dict(zip([r.key for r in rows], shown["role"], strict=True))
    assert roles["sglang-eagle-2"] == "fits the engine work"
    assert roles["sglang-eagle-3"] == "checks the model"
    assert shown.loc[0, "signed error (%)"] == pytest.approx(100 * rows[0].relative_error)
    assert shown.loc[8, "w (model)"] == "—"  # a step row has no round
    assert shown.loc[9, "c (source)"] == "not given" and shown.loc[8, "c (source)"] == "—"
    cells = {str(v) for column in shown.columns for v in shown[column]}
    assert "None" not in cells and "nan" not in cells


def test_measured_figures_put_the_h200_beside_the_model():
    fits = [sm.fits(b, 4096) for b in sm.BATCHES]
    fig = serving_figures.measured_v_figure(
        sm.BATCHES,
        sm.measured_v(4, 4096),
        sm.measured_v(4, 4096, sm.TWO),
        sm.model_v(4, 4096),
        k=4,
        context=4096,
        fits=fits,
    )
    best = _trace(fig, "measured, faster kernel per shape")
    np.testing.assert_allclose(best.y, sm.measured_v(4, 4096))
    assert list(best.marker.symbol).count("square-open") == 1  # 256 x 4,096 does not fit
    np.testing.assert_allclose(_trace(fig, "model (per-layer roofline)").y, sm.model_v(4, 4096))
    assert fig.layout.title.text == "v(4) on one H200, 4,096 tokens"
    step = serving_figures.measured_step_figure(
        sm.BATCHES,
        {m: sm.target_ms(m, 1024) for m in (1, 5)},
        {m: sm.model_ms(m, 1024) for m in (1, 5)},
        context=1024,
        fits=[True] * 9,
    )
    assert {t.name for t in step.data} == {
        "1 token(s), measured",
        "1 token(s), model",
        "5 token(s), measured",
        "5 token(s), model",
    }
    assert step.layout.yaxis.type == "log"
