"""Figure and table builders of the Serving lab: traces, values, markers, escaping."""

import numpy as np
import pytest

from specdec_core import serving as sv
from specdec_ui import figures_serving as fsv

SETUP = sv.ServingSetup(
    sv.GPUS["4x-h100"], sv.TARGETS["llama-3.1-70b"], sv.DRAFTS["llama-3.2-1b"], 1_024
)
SERVER = sv.ServerCosts("this server", 4, 400e-6, 0.2, 1.6)


def _sweep(alpha=0.75, k=4):
    grid = np.union1d(sv.batch_grid(sv.max_batch(SETUP), 30), [8, 64])
    return sv.batch_sweep(SETUP, alpha, k, grid)


def _trace(fig, name):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


def test_speedup_vs_batch_draws_the_core_curve_best_k_and_break_even():
    sweep = _sweep()
    be = sv.break_even_batch(SETUP, 0.75, 4)
    fig = fsv.speedup_vs_batch_figure(sweep, break_even=be, current=(64, 2.5), server=SERVER)
    curve = _trace(fig, "speedup, K = 4")
    np.testing.assert_array_equal(curve.x, sweep.batch)
    np.testing.assert_allclose(curve.y, sv.serving_speedup(SETUP, 0.75, 4, sweep.batch))
    best = _trace(fig, "best K")
    np.testing.assert_array_equal(best.customdata, sv.best_k(SETUP, 0.75, sweep.batch))
    assert np.all(np.asarray(best.y) >= np.asarray(curve.y) - 1e-12)
    line = _trace(fig, "break-even batch")
    assert list(line.x) == [be, be] == [272, 272] and line.text[1] == "break-even b = 272"
    assert list(_trace(fig, "your batch").x) == [64]
    server = _trace(fig, fsv.SERVER_NAME)
    assert list(server.x) == [1] and server.y[0] == pytest.approx(SERVER.speedup(0.75))
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.shapes[0].y0 == 1.0  # the no-gain line


def test_speedup_vs_batch_without_break_even_or_server_has_no_such_traces():
    fig = fsv.speedup_vs_batch_figure(_sweep(alpha=0.95), break_even=None)
    names = {t.name for t in fig.data}
    assert "break-even batch" not in names and fsv.SERVER_NAME not in names
    assert "your batch" not in names


def test_verify_cost_figure_has_one_curve_per_k_and_the_ceiling():
    batch = sv.batch_grid(sv.max_batch(SETUP), 25)
    v_by_k = {k: sv.verify_cost(SETUP, k, batch) for k in (1, 2, 4, 8)}
    cb = sv.compute_bound_batch(SETUP, 5)
    fig = fsv.verify_cost_figure(batch, v_by_k, k_current=4, compute_bound=cb, server=SERVER)
    for k in (1, 2, 4, 8):
        np.testing.assert_allclose(_trace(fig, f"K = {k}").y, v_by_k[k])
    assert _trace(fig, "K = 4").line.width == 4 and _trace(fig, "K = 1").line.width == 2
    ceiling = _trace(fig, "K + 1 (no parallelism left)")
    assert list(ceiling.y) == [5, 5] and ceiling.text[-1] == "K + 1 = 5"
    assert list(_trace(fig, "compute-bound from here").x) == [cb, cb] == [68, 68]
    assert _trace(fig, fsv.SERVER_NAME).y[0] == 1.6


def test_throughput_latency_curves_are_b_over_latency_per_chip():
    sweep = _sweep()
    fig = fsv.throughput_latency_figure(sweep, server=SERVER, hardware_label="4 x H100 <b>")
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
    assert ticks == sorted(ticks) and {1.0, 10.0} <= set(ticks)  # 1-2-5 on the log axis


def test_log_ticks_are_1_2_5_around_the_range():
    assert fsv.log_ticks(0.7, 30.0) == [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
    assert fsv.log_ticks(100.0, 100.0) == [100.0, 200.0]


def test_published_table_has_the_error_of_each_row():
    rows = sv.published_checks()
    table = fsv.published_table(rows)
    assert len(table) == len(rows)
    assert list(table.columns) == list(fsv.PUBLISHED_COLUMNS.values())
    np.testing.assert_allclose(table["model − published"], [r.error for r in rows])
    np.testing.assert_allclose(table["error (%)"], [100 * r.relative_error for r in rows])
    assert table.loc[0, "published"] == 3.4 and table.loc[0, "c (paper)"] == 0.02
