"""Serving lab: the answer, the charts, this server's point, the link, the checklist, logs."""

import pytest

import specdec_core as sc
from specdec_core import serving as sv
from specdec_core.lm.adaptive import CostProfile
from specdec_ui import figures_serving as fsv
from specdec_ui import serving_view as view
from specdec_ui.text import md_escape
from tests.app.conftest import figures, open_page

PAGE = "pages/scripts/serving.py"


# This server's costs: a plain step of 0.4 ms, c = 0.19, v(k) growing from 1 (k = 0).
FAKE_COSTS = CostProfile(
    pair=view.SERVER_PAIR,
    draft=0.19,
    verify=(1.0, 1.4, 1.5, 1.6, 2.6, 2.7, 2.8, 2.9, 3.2),
    per_token=True,
    step_s=0.0004,
    kernel="fake",
)
CALLS: list[tuple] = []


@pytest.fixture(autouse=True)
def _measured_server(monkeypatch):
    """This server's cost profile, without measuring a real one (and without leaving
    anything in the shared store for other tests)."""
    CALLS.clear()

    def get_costs(pair, temperature, *, wait=False):
        CALLS.append((pair, temperature, wait))
        return FAKE_COSTS

    monkeypatch.setattr(view.lw, "get_costs", get_costs)


def _answer(at) -> str:
    return at.get_by_key("serve_answer").children[0].value


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _figure(at, title_start: str) -> dict:
    return next(f for f in figures(at) if f["layout"]["title"]["text"].startswith(title_start))


def _trace(fig: dict, name: str) -> dict:
    return next(t for t in fig["data"] if t.get("name") == name)


def test_default_is_llama_70b_on_4_h100_with_its_break_even_batch():
    at = open_page(PAGE)
    assert not at.exception and not at.error and not at.warning
    assert _answer(at) == (
        "**At batch 1: 2.59x** with K = 4 and alpha = 0.75 on 4 x H100 SXM. Best K here: 7 "
        "(2.74x). Speculation stops paying at b = 272 (break-even batch)."
    )
    assert _metric(at, "target step") == "10.85 ms"
    assert _metric(at, "v(4) = verify / step") == "1.00"
    assert _metric(at, "plain step bound by") == "memory"
    assert _metric(at, "verify of 5 bound by") == "memory"
    speed = _figure(at, "Speedup vs batch size")
    assert _trace(speed, "break-even batch")["x"] == [272, 272]
    assert _trace(speed, "your batch")["x"] == [1]
    assert len(figures(at)) == 4  # three charts and the engine log's


def test_this_server_is_a_point_on_the_charts_from_the_model_pair_lab_measurement():
    at = open_page(PAGE)
    costs = sv.ServerCosts("x", 4, FAKE_COSTS.step_s, FAKE_COSTS.draft, FAKE_COSTS.verify[4])
    point = _trace(_figure(at, "Speedup vs batch size"), fsv.SERVER_NAME)
    assert point["x"] == [1] and point["y"][0] == pytest.approx(costs.speedup(0.75))
    v_point = _trace(_figure(at, "Verify cost"), fsv.SERVER_NAME)
    assert v_point["y"][0] == pytest.approx(2.6)
    plain = _trace(_figure(at, "Tokens/s per chip"), "this server, plain")
    assert plain["x"][0] == pytest.approx(1e3 * FAKE_COSTS.step_s)
    assert any("v(4) = 2.60" in c.value for c in at.caption)
    assert CALLS[-1] == (view.SERVER_PAIR, 0.0, False)  # never waits for the measurement


def test_while_this_server_is_measured_the_page_says_so_and_draws_no_point(monkeypatch):
    monkeypatch.setattr(view, "this_server_costs", lambda k: view.ServerReading(None, True))
    at = open_page(PAGE)
    assert not at.exception
    assert any("Measuring this server" in i.value for i in at.info)
    names = {t.get("name") for f in figures(at) for t in f["data"]}
    assert fsv.SERVER_NAME not in names and "this server, plain" not in names


def test_the_share_link_holds_every_input_and_reopens_the_same_page():
    at = open_page(PAGE)
    at.selectbox(key="serve_hw").set_value("h100-sxm").run()
    at.selectbox(key="serve_target").set_value("llama-3.1-8b").run()
    at.selectbox(key="serve_draft").set_value("eagle-head").run()
    at.number_input(key="serve_batch").set_value(64).run()
    at.number_input(key="serve_context").set_value(512).run()
    at.slider(key="serve_alpha").set_value(0.8).run()
    at.slider(key="serve_k").set_value(5).run()
    assert not at.exception and not at.error
    params = dict(at.query_params.items())
    assert set(view.DEFAULTS) <= set(params)  # every input is in the link
    assert params["hw"] == "h100-sxm" and params["hw_bw"] == "3350" and params["batch"] == "64"
    answer = _answer(at)
    again = open_page(PAGE, {k: v[0] if isinstance(v, list) else v for k, v in params.items()})
    assert not again.exception and not again.warning
    assert _answer(again) == answer
    assert again.selectbox(key="serve_draft").value == "eagle-head"
    assert again.slider(key="serve_k").value == 5


def test_typed_numbers_in_a_link_open_as_typed_hardware():
    at = open_page(
        PAGE, {"hw": "h100-sxm", "hw_bw": "2000", "hw_chips": "1", "target": "llama-3.1-8b"}
    )
    assert not at.exception and not at.warning
    assert at.selectbox(key="serve_hw").value == view.CUSTOM
    assert at.number_input(key="serve_hw_bw").value == 2000.0
    assert "on typed hardware" in _answer(at)


@pytest.mark.parametrize(
    ("query", "bad"),
    [
        ({"batch": "0"}, "batch"),
        ({"batch": "5000"}, "batch"),
        ({"alpha": "2"}, "alpha"),
        ({"alpha": "nan"}, "alpha"),
        ({"k": "9"}, "k"),
        ({"hw": "tpu-v5"}, "hw"),
        ({"context": "-1"}, "context"),
        ({"overhead": "1e400"}, "overhead"),
        ({"t_layers": "1.5"}, "t_layers"),
        ({"log_rates": "0.5, 0.9"}, "log_rates"),
        ({"log_mode": "<script>x</script>"}, "log_mode"),
    ],
)
def test_bad_link_values_are_named_in_a_warning_and_fall_back(query, bad):
    at = open_page(PAGE, query)
    assert not at.exception
    assert len(at.warning) == 1 and f"'{md_escape(bad)}'" in at.warning[0].value
    assert "<script>" not in at.warning[0].value
    assert _answer(at).startswith("**At batch 1: 2.59x**")  # the defaults


def test_a_model_that_does_not_fit_is_refused_with_both_sizes():
    at = open_page(PAGE)
    at.selectbox(key="serve_hw").set_value("h100-sxm").run()
    assert not at.exception
    assert len(at.error) == 1
    text = at.error[0].value
    assert "143" in text and "9 GB" in text and "80" in text and "H100 SXM" in text
    with pytest.raises(KeyError):  # no answer for a setup that cannot run
        at.get_by_key("serve_answer")
    at.number_input(key="serve_hw_chips").set_value(2).run()  # typed: 2 chips, 160 GB
    assert not at.error and "typed hardware" in _answer(at)


def test_a_batch_that_does_not_fit_names_the_kv_cache():
    at = open_page(PAGE, {"batch": "2000"})
    assert not at.exception
    assert "KV cache for 2,000 x 1,024 tokens" in at.error[0].value.replace("\\", "")


@pytest.mark.parametrize("item", list(view.WHY))
def test_each_checklist_button_sets_the_page_to_show_it(item):
    at = open_page(PAGE)
    at.button(key=f"serve_why_{item}").click().run()
    assert not at.exception and not at.error
    settings = view.WHY[item].settings
    assert at.number_input(key="serve_batch").value == settings["batch"]
    assert at.slider(key="serve_alpha").value == settings["alpha"]
    assert at.slider(key="serve_k").value == settings["k"]
    assert at.selectbox(key="serve_draft").value == settings["draft"]
    now = at.get_by_key("serve_why_now")
    assert now is not None and "Now:" in now.children[1].value
    assert dict(at.query_params.items())["batch"] == str(settings["batch"])


def test_verifying_is_not_free_turns_the_gain_into_a_slowdown():
    at = open_page(PAGE)
    at.button(key="serve_why_compute").click().run()
    assert _answer(at).startswith("**At batch 512: 0.83x**")
    assert _metric(at, "plain step bound by") == "memory"  # one token per sequence: not yet
    assert _metric(at, "verify of 5 bound by") == "arithmetic"
    assert float(_metric(at, "v(4) = verify / step")) > 2.5
    at.button(key="serve_why_slow_draft").click().run()
    assert at.number_input(key="serve_draft_c").value == 0.9
    assert _answer(at).startswith("**At batch 1: 0.66x**")


def test_the_engine_log_decoder_reads_the_llama_cpp_and_vllm_logs():
    at = open_page(PAGE)
    assert _metric(at, "mean acceptance length AL") == "2.92"
    m = sc.metrics_from_rates([0.805, 0.632, 0.483])
    assert _metric(at, "fitted alpha (i.i.d. model)") == f"{m.fitted_alpha:.3f}"
    table = at.dataframe[0].value
    assert list(table["r_i"]) == [0.805, 0.632, 0.483]
    assert list(table["r_i / r_(i-1)"]) == [0.805, round(0.632 / 0.805, 3), round(0.483 / 0.632, 3)]
    chart = _figure(at, "Your log, position by position")  # the engine panel's own chart
    assert chart["data"][0]["y"] == [0.805, 0.632, 0.483]
    assert chart["data"][2]["y"] == pytest.approx([m.fitted_alpha**i for i in (1, 2, 3)])
    at.selectbox(key="serve_log_preset").set_value("vllm-k7").run()
    assert _metric(at, "draft acceptance rate (K = 7)") == "0.273"
    assert _metric(at, "fitted alpha") == "n/a"
    at.selectbox(key="serve_log_preset").set_value("vllm-counts").run()
    assert _metric(at, "mean acceptance length AL") == "2.92"
    assert _metric(at, "fitted alpha (i.i.d. model)") == f"{m.fitted_alpha:.3f}"


def test_a_typed_log_that_increases_is_refused_and_the_fit_can_be_used_above():
    at = open_page(PAGE)
    at.text_input(key="serve_log_rates").input("0.5, 0.9").run()
    assert not at.exception
    assert at.selectbox(key="serve_log_preset").value == view.CUSTOM
    assert len(at.error) == 1 and "position 2 (0.9) is above position 1" in at.error[
        0
    ].value.replace("\\", "")
    at.text_input(key="serve_log_rates").input("0.9, 0.8, 0.7, 0.6").run()
    fitted = sc.metrics_from_rates([0.9, 0.8, 0.7, 0.6]).fitted_alpha
    at.button(key="serve_log_use").click().run()
    assert at.slider(key="serve_alpha").value == round(fitted, 2)
    assert at.slider(key="serve_k").value == 4
    assert dict(at.query_params.items())["log_rates"] == "0.9, 0.8, 0.7, 0.6"


def test_published_checks_table_shows_each_error():
    at = open_page(PAGE)
    table = next(d.value for d in at.dataframe if "error (%)" in d.value.columns)
    rows = sv.published_checks()
    assert len(table) == len(rows)
    assert list(table["published"]) == pytest.approx([r.published for r in rows])
    assert list(table["error (%)"]) == pytest.approx([100 * r.relative_error for r in rows])
    text = " ".join(m.value for m in at.markdown)
    assert "Leviathan et al" in text and "communication" in text


def test_presenter_view_folds_the_inputs_and_keeps_the_link():
    at = open_page(PAGE, {"present": "1"})
    assert not at.exception
    inputs = next(e for e in at.expander if "Inputs" in e.label)
    assert not inputs.proto.expanded
    assert at.query_params.get("present") in ("1", ["1"])


def test_a_measurement_that_failed_gives_no_point_and_says_why(monkeypatch):
    reason = view.lw.Unmeasured("The measurement of this server's costs did not finish in 120 s")
    monkeypatch.setattr(view.lw, "get_costs", lambda *args, **kwargs: reason)
    at = open_page(PAGE)
    assert not at.exception
    assert any("did not finish in 120 s" in c.value for c in at.caption)
    names = {t.get("name") for f in figures(at) for t in f["data"]}
    assert fsv.SERVER_NAME not in names

    def busy(*args, **kwargs):
        raise RuntimeError("Too many requests wait already")

    monkeypatch.setattr(view.lw, "get_costs", busy)
    at = open_page(PAGE)
    assert not at.exception
    assert any("Too many requests wait already" in c.value for c in at.caption)
