"""Serving lab, "Under load": the answer quotes the core's numbers, the three charts draw,
the inputs change the answer, bad values are refused by name and the rest of the page stays."""

import pytest

from specdec_core import serving as sv
from specdec_core import serving_load as sl
from specdec_ui.serving import view as serving_view
from tests.app.conftest import figures, open_page
from tests.app.test_page_serving import FAKE_COSTS  # this server's costs, faked

PAGE = "pages/scripts/serving.py"
LOAD_TITLES = ("Time per output token against load", "Tokens served against load")


@pytest.fixture(autouse=True)
def _measured_server(monkeypatch):
    """This server's cost profile, without measuring a real one."""
    monkeypatch.setattr(serving_view.model_pairs_work, "get_costs", lambda *a, **k: FAKE_COSTS)


def _load_answer(at) -> str:
    return at.get_by_key("serve_load_answer").children[0].value.replace("\\", "")


def _titles(at) -> list[str]:
    return [f["layout"]["title"]["text"] for f in figures(at)]


DEFAULT_WORK = sl.Workload(512, 256)


def _core(draft="llama-3.2-1b", work=DEFAULT_WORK, qps_max=40.0):
    setup = sv.ServingSetup(
        sv.GPUS["4x-h100"], sv.TARGETS["llama-3.1-70b"], sv.DRAFTS[draft], 1_024
    )
    acc = sv.Acceptance(4, alpha=0.75)
    sweep = sl.load_sweep(setup, acc, work, sl.qps_grid(qps_max, 40))
    return sweep, sl.crossover_qps(setup, acc, work, qps_max, sweep)


def test_the_default_answer_quotes_the_cores_gain_capacities_and_crossover():
    at = open_page(PAGE)
    assert not at.exception and not at.error
    sweep, cross = _core()
    text = _load_answer(at)
    assert f"speculation gives **{sweep.gain[0]:.2f}x** per token" in text
    assert f"keeps up with {sweep.plain_capacity:.3g} requests per second" in text
    assert f"speculation with {sweep.spec_capacity:.3g}." in text
    assert f"stops paying from QPS {cross:.3g}" in text
    assert "speculative_disable_by_batch_size = 64" in text
    titles = _titles(at)
    assert all(t in titles for t in LOAD_TITLES) and "Memory against batch" in titles
    setup = sv.ServingSetup(
        sv.GPUS["4x-h100"], sv.TARGETS["llama-3.1-70b"], sv.DRAFTS["llama-3.2-1b"], 1_024
    )
    curve = sl.memory_curve(setup, DEFAULT_WORK)
    i = int(abs(curve.context - 640).argmin())
    plain, spec = int(curve.without_draft[i]), int(curve.with_draft[i])
    words = " ".join(c.value for c in at.caption)
    assert f"the draft's weights and cache take {plain - spec:,} of {plain:,} sequences" in words
    assert f"From {curve.binds_from:,} tokens of context the KV cache" in words


def test_the_inputs_change_the_answer_and_zero_never_switches_off():
    at = open_page(PAGE)
    at.number_input(key="serve_load_off").set_value(0).run()
    assert "never switches speculation off" in _load_answer(at)
    at.number_input(key="serve_load_prompt").set_value(128).run()
    at.number_input(key="serve_load_output").set_value(512).run()
    assert not at.exception and not at.error
    sweep, _ = _core(work=sl.Workload(128, 512))
    assert f"keeps up with {sweep.plain_capacity:.3g} requests per second" in _load_answer(at)


def test_the_pages_draft_reaches_the_load_model():
    at = open_page(PAGE)
    at.selectbox(key="serve_draft").set_value("eagle-head").run()
    assert not at.exception and not at.error
    sweep, _ = _core(draft="eagle-head")
    assert f"speculation gives **{sweep.gain[0]:.2f}x** per token" in _load_answer(at)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        (
            [("serve_load_qps", 0.0)],
            "highest QPS on the charts = 0 is out of range; allowed: 0.001 to 10000",
        ),
        (
            [("serve_load_prompt", 100_000), ("serve_load_output", 40_000)],
            "prompt tokens + output tokens per request = 140,000 is out of range",
        ),
        (
            [("serve_load_mem", 0.0)],
            "share of memory for weights and KV cache = 0 is out of range",
        ),
        (
            [("serve_load_mem", 0.44)],  # 0.44 x 320 GB = 140.8 GB: the weights take 143.6
            "not one sequence of 640 tokens fits in 44% of the 320.0 GB",
        ),
    ],
)
def test_bad_load_values_are_refused_by_name_and_the_rest_of_the_page_stays(steps, message):
    at = open_page(PAGE)
    for key, value in steps:
        at.number_input(key=key).set_value(value).run()
    assert not at.exception
    assert len(at.error) == 1 and message in at.error[0].value.replace("\\", "")
    titles = _titles(at)
    assert not any(t in titles for t in LOAD_TITLES)
    assert at.get_by_key("serve_answer").children[0].value  # the page's own answer stays
