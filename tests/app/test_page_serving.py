"""Serving lab: the answer, the charts, this server's point, the link, the new inputs with bad
values refused by name, the checklist's computed lessons, the log decoder, the H200 and the
published table."""

import pytest

import specdec_core as sc
from specdec_core import serving as sv
from specdec_core import serving_published as sp
from specdec_core.lm.adaptive import CostProfile
from specdec_ui import page_questions
from specdec_ui.kit.text import md_escape
from specdec_ui.serving import cases as serving_cases
from specdec_ui.serving import figures as serving_figures
from specdec_ui.serving import questions as serving_questions
from specdec_ui.serving import view as serving_view
from tests.app.conftest import figures, open_page
from tests.app.shown_tables import shown_table

PAGE = "pages/scripts/serving.py"
DEFAULT_ANSWER = (
    "**At batch 1: 2.25x** with K = 4 and alpha = 0.75 on 4 x H100 SXM. Best K here: 6 "
    "(2.35x). With K = 4, speculation stops paying at b = 133 (break-even batch)."
)


# This server's costs: a plain step of 0.4 ms, c = 0.19, v(k) growing from 1 (k = 0).
FAKE_COSTS = CostProfile(
    pair=serving_view.SERVER_PAIR,
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

    monkeypatch.setattr(serving_view.model_pairs_work, "get_costs", get_costs)


def _answer(at) -> str:
    return at.get_by_key("serve_answer").children[0].value


def _plain(text: str) -> str:
    """Markdown as a student reads it (the escapes removed)."""
    return text.replace("\\", "")


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _figure(at, title_start: str) -> dict:
    return next(f for f in figures(at) if f["layout"]["title"]["text"].startswith(title_start))


def _trace(fig: dict, name: str) -> dict:
    return next(t for t in fig["data"] if t.get("name") == name)


def _names(fig: dict) -> set:
    return {t.get("name") for t in fig["data"]}


def test_default_is_llama_70b_on_4_h100_with_its_break_even_batch():
    at = open_page(PAGE)
    assert not at.exception and not at.error and not at.warning
    assert _answer(at) == DEFAULT_ANSWER
    assert _metric(at, "target step") == "17.30 ms"
    assert _metric(at, "c: draft step / target step") == "0.060"
    assert _metric(at, "v: verify of 5 tokens / step") == "1.01"
    assert _metric(at, "tokens per round") == "3.05"
    assert _metric(at, "verify bound by") == "memory"
    assert _metric(at, "KV cache share of a step") == "0.2%"  # 84 MB of 35 GB per chip
    speed = _figure(at, "Speedup vs batch size")
    assert _trace(speed, "break-even batch")["x"] == [133, 133]
    assert _trace(speed, "your batch")["x"] == [1]
    assert len(figures(at)) == 9  # three charts, three under load, the H200's two, the log's


def test_this_server_is_a_point_on_the_charts_from_the_model_pair_lab_measurement():
    at = open_page(PAGE)
    costs = sv.ServerCosts("x", 4, FAKE_COSTS.step_s, FAKE_COSTS.draft, FAKE_COSTS.verify[4])
    point = _trace(_figure(at, "Speedup vs batch size"), serving_figures.SERVER_NAME)
    assert point["x"] == [1] and point["y"][0] == pytest.approx(costs.speedup(0.75))
    v_point = _trace(_figure(at, "Verify cost"), serving_figures.SERVER_NAME)
    assert v_point["y"][0] == pytest.approx(2.6)
    plain = _trace(_figure(at, "Tokens/s per chip"), "this server, plain")
    assert plain["x"][0] == pytest.approx(1e3 * FAKE_COSTS.step_s)
    assert any("v(4) = 2.60" in c.value for c in at.caption)
    assert CALLS[-1] == (serving_view.SERVER_PAIR, 0.0, False)  # never waits for the measurement


def test_while_this_server_is_measured_the_page_says_so_and_draws_no_point(monkeypatch):
    monkeypatch.setattr(
        serving_view, "this_server_costs", lambda k: serving_view.ServerReading(None, True)
    )
    at = open_page(PAGE)
    assert not at.exception
    assert any("Measuring this server" in i.value for i in at.info)
    names = {t.get("name") for f in figures(at) for t in f["data"]}
    assert serving_figures.SERVER_NAME not in names and "this server, plain" not in names


def test_the_share_link_holds_every_input_and_reopens_the_same_page():
    at = open_page(PAGE)
    at.selectbox(key="serve_hw").set_value("h100-sxm").run()
    at.selectbox(key="serve_target").set_value("llama-3.1-8b").run()
    at.selectbox(key="serve_draft").set_value("eagle-head").run()
    at.number_input(key="serve_batch").set_value(64).run()
    at.number_input(key="serve_context").set_value(512).run()
    at.slider(key="serve_alpha").set_value(0.8).run()
    at.slider(key="serve_k").set_value(5).run()
    at.selectbox(key="serve_bpp").set_value("fp8").run()
    at.number_input(key="serve_bw_frac").set_value(0.8).run()
    assert not at.exception and not at.error
    params = dict(at.query_params.items())
    assert set(serving_view.DEFAULTS) <= set(params)  # every input is in the link
    assert params["hw"] == "h100-sxm" and params["hw_bw"] == "3350" and params["batch"] == "64"
    assert params["bpp"] == "fp8" and params["bw_frac"] == "0.8"
    answer = _answer(at)
    again = open_page(PAGE, {k: v[0] if isinstance(v, list) else v for k, v in params.items()})
    assert not again.exception and not again.warning
    assert _answer(again) == answer
    assert again.selectbox(key="serve_draft").value == "eagle-head"
    assert again.slider(key="serve_k").value == 5
    assert again.selectbox(key="serve_bpp").value == "fp8"


def test_typed_numbers_in_a_link_open_as_typed_hardware():
    at = open_page(
        PAGE, {"hw": "h100-sxm", "hw_bw": "2000", "hw_chips": "1", "target": "llama-3.1-8b"}
    )
    assert not at.exception and not at.warning
    assert at.selectbox(key="serve_hw").value == serving_view.CUSTOM
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
        ({"bw_frac": "1.5"}, "bw_frac"),
        ({"fl_frac": "0"}, "fl_frac"),
        ({"draft_tp": "2"}, "draft_tp"),
        ({"bpp": "fp4"}, "bpp"),
        ({"acc": "beta"}, "acc"),
        ({"tau": "20"}, "tau"),
        ({"prefill": "-5"}, "prefill"),
        ({"share": "1.2"}, "share"),
        ({"t_tied": "maybe"}, "t_tied"),
        ({"kernel": "flash"}, "kernel"),
        ({"work": "-1"}, "work"),
        ({"work": "5000"}, "work"),
    ],
)
def test_bad_link_values_are_named_in_a_warning_and_fall_back(query, bad):
    at = open_page(PAGE, query)
    assert not at.exception
    assert len(at.warning) == 1 and f"'{md_escape(bad)}'" in at.warning[0].value
    assert "<script>" not in at.warning[0].value
    assert _answer(at).startswith("**At batch 1: 2.25x**")  # the defaults


def test_a_model_that_does_not_fit_is_refused_with_both_sizes():
    at = open_page(PAGE)
    at.selectbox(key="serve_hw").set_value("h100-sxm").run()
    assert not at.exception
    assert len(at.error) == 1
    text = at.error[0].value
    assert "143" in text and "9 GB" in text and "80" in text and "H100 SXM" in text
    with pytest.raises(KeyError):  # no answer for a setup that cannot run
        at.get_by_key("serve_answer")
    at.selectbox(key="serve_bpp").set_value("int4").run()  # int4 weights: 35 GB, it fits
    assert not at.error and "H100 SXM" in _answer(at)
    at.selectbox(key="serve_bpp").set_value("bf16").run()
    at.number_input(key="serve_hw_chips").set_value(2).run()  # typed: 2 chips, 160 GB
    assert not at.error and "typed hardware" in _answer(at)


def test_a_batch_that_does_not_fit_names_the_kv_cache():
    at = open_page(PAGE, {"batch": "2000"})
    assert not at.exception
    assert "KV cache for 2,000 x 1,024 tokens" in _plain(at.error[0].value)


def test_a_measured_tau_and_a_tree_replace_alpha():
    """tau = 4 tokens per round, a tree of 32 verified in 5 steps: the answer names them, the
    v chart draws the 32-token verify, and no best-K curve (no alpha to try other K with)."""
    at = open_page(PAGE)
    at.radio(key="serve_acc").set_value("tau").run()
    at.number_input(key="serve_tau").set_value(4.0).run()
    at.number_input(key="serve_verified").set_value(32).run()
    at.slider(key="serve_k").set_value(5).run()
    assert not at.exception and not at.error
    assert "tau = 4.00 tokens per round, 32 verified, 5 draft steps" in _answer(at)
    assert "Best K" not in _answer(at) and "With this round" in _answer(at)
    assert _metric(at, "v: verify of 32 tokens / step") == "1.04"
    speed = _figure(at, "Speedup vs batch size (tau 4.00 of 32 verified)")
    assert "best K" not in _names(speed) and serving_figures.SERVER_NAME not in _names(speed)
    assert "32 tokens" in _names(_figure(at, "Verify cost"))


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([("serve_tau", 6.0)], "tau, tokens per round = 6 is out of range; allowed: 1 to 5"),
        ([("serve_verified", 3)], "tokens verified per round = 3 is out of range; allowed: 5"),
    ],
)
def test_bad_acceptance_values_are_refused_by_name(steps, message):
    at = open_page(PAGE)
    at.radio(key="serve_acc").set_value("tau").run()
    for key, value in steps:
        at.number_input(key=key).set_value(value).run()
    assert not at.exception
    assert len(at.error) == 1 and message in _plain(at.error[0].value)


def test_a_typed_model_too_small_for_its_vocabulary_is_refused_by_name():
    at = open_page(PAGE)
    at.selectbox(key="serve_target").set_value("llama-3.1-8b").run()
    at.selectbox(key="serve_hw").set_value("h100-sxm").run()
    at.number_input(key="serve_t_params").set_value(0.5).run()
    assert not at.exception and at.selectbox(key="serve_target").value == serving_view.CUSTOM
    assert "typed model (bf16): 0.5 B parameters cannot hold its 128,256 x 4,096 embedding" in (
        _plain(at.error[0].value)
    )


def test_the_draft_on_one_chip_and_the_prefill_change_the_answer():
    at = open_page(PAGE)
    at.radio(key="serve_draft_tp").set_value("1").run()
    assert _metric(at, "c: draft step / target step") == "0.093"
    at.number_input(key="serve_prefill").set_value(2048).run()
    assert "prompts move" in _answer(at) and "all tokens together" in _answer(at)


@pytest.mark.parametrize("item", list(serving_cases.WHY))
def test_each_checklist_button_sets_the_page_and_its_lesson_quotes_the_answer(item):
    at = open_page(PAGE)
    at.button(key=f"serve_why_{item}").click().run()
    assert not at.exception and not at.error
    settings = serving_cases.WHY[item].settings
    assert at.number_input(key="serve_batch").value == settings["batch"]
    assert at.slider(key="serve_alpha").value == settings["alpha"]
    assert at.slider(key="serve_k").value == settings["k"]
    assert at.selectbox(key="serve_draft").value == settings["draft"]
    lesson = _plain(at.get_by_key("serve_why_now").children[1].value)
    speedup = _answer(at).split("**")[1].split(": ")[1]  # "0.83x" of the bold answer
    if item == "prefill":  # its lesson is about the whole server: all tokens together
        assert "each sequence decodes " + speedup.removesuffix("x") + "x as fast" in lesson
    else:
        assert speedup.removesuffix("x") + "x" in lesson, (speedup, lesson)
    assert dict(at.query_params.items())["batch"] == str(settings["batch"])


def test_lessons_that_used_to_contradict_their_numbers_now_follow_them():
    at = open_page(PAGE)
    at.button(key="serve_why_alpha_low").click().run()
    lesson = _plain(at.get_by_key("serve_why_now").children[1].value)
    assert _answer(at).startswith("**At batch 1: 1.15x**")
    assert "a gain of 1.15x" in lesson and "makes up for the low alpha" in lesson
    at.button(key="serve_why_compute").click().run()
    lesson = _plain(at.get_by_key("serve_why_now").children[1].value)
    assert "a loss: 0.78x" in lesson and "The best K at this batch is 1: a loss: 0.93x" in lesson
    assert "Best K here: 1 (0.93x)" in _answer(at)
    assert "K c + v + w = 3.93 plain steps" in lesson  # the engine's work is in the round
    at.button(key="serve_why_lookup").click().run()
    lesson = _plain(at.get_by_key("serve_why_now").children[1].value)
    assert "here in 35% of the rounds" in lesson and "unigram and bigram" in lesson
    at.number_input(key="serve_batch").set_value(8).run()  # the student moves on
    lesson = _plain(at.get_by_key("serve_why_now").children[1].value)
    assert "press the case's button again" in lesson


def test_a_slow_draft_says_slower_at_every_batch_size_in_the_answer_and_the_chart():
    at = open_page(PAGE)
    at.button(key="serve_why_slow_draft").click().run()
    assert at.number_input(key="serve_draft_c").value == 0.9
    assert _answer(at).startswith("**At batch 1: 0.65x**")
    assert "slower than plain decoding at every batch size" in _answer(at)
    speed = _figure(at, "Speedup vs batch size")
    assert "break-even batch" not in _names(speed)  # no "break-even b = 1" over "no gain"
    notes = [a["text"] for a in speed["layout"]["annotations"]]
    assert "slower at every batch size" in notes


def test_the_engine_log_decoder_reads_the_llama_cpp_and_vllm_logs():
    at = open_page(PAGE)
    assert _metric(at, "mean acceptance length AL") == "2.92"
    m = sc.metrics_from_rates([0.805, 0.632, 0.483])
    assert _metric(at, "fitted alpha (i.i.d. model)") == f"{m.fitted_alpha:.3f}"
    log_table = shown_table(at, "r_i")
    assert list(log_table.value["r_i"]) == [0.805, 0.632, 0.483]
    shown = log_table.shown  # as the screen shows it and a screen reader reads it (issue 33)
    assert list(shown["r_i"]) == ["0.805", "0.632", "0.483"]
    assert list(shown["r_i / r_(i-1)"]) == ["0.805", f"{0.632 / 0.805:.3f}", f"{0.483 / 0.632:.3f}"]
    assert list(shown["alpha^i"]) == [f"{m.fitted_alpha**i:.3f}" for i in (1, 2, 3)]
    assert "by draft position" in log_table.name
    chart = _figure(at, "Your log, position by position")  # the engine panel's own chart
    assert chart["data"][0]["y"] == [0.805, 0.632, 0.483]
    assert chart["data"][2]["y"] == pytest.approx([m.fitted_alpha**i for i in (1, 2, 3)])
    at.selectbox(key="serve_log_preset").set_value("vllm-k7").run()
    assert _metric(at, "(AL − 1) / K, K = 7") == "0.273"
    assert _metric(at, "fitted alpha (i.i.d. model)") == "n/a"
    at.selectbox(key="serve_log_preset").set_value("vllm-counts").run()
    assert _metric(at, "mean acceptance length AL") == "2.92"
    assert _metric(at, "accepted / draft tokens (vLLM)") == "0.640"
    assert any("They agree: every round drafted K = 3" in x.value for x in at.markdown)


def test_vllm_counters_of_shorter_drafts_show_both_rates_and_why_they_differ():
    at = open_page(PAGE)
    at.selectbox(key="serve_log_preset").set_value("vllm-ngram").run()
    assert not at.exception and not at.error
    assert _metric(at, "(AL − 1) / K, K = 3") == "0.483"
    assert _metric(at, "accepted / draft tokens (vLLM)") == "0.604"
    words = " ".join(_plain(x.value) for x in at.markdown)
    assert "They differ: the rounds drafted 2.40 tokens on average, not K = 3" in words
    at.number_input(key="serve_log_accepted").set_value(1_000).run()
    assert at.selectbox(key="serve_log_preset").value == serving_view.CUSTOM
    assert "num_accepted_tokens = 1,000 but the per-position counts add up to 1,450" in _plain(
        at.error[0].value
    )


def test_a_typed_log_that_increases_is_refused_and_the_fit_can_be_used_above():
    at = open_page(PAGE)
    at.text_input(key="serve_log_rates").input("0.5, 0.9").run()
    assert not at.exception
    assert at.selectbox(key="serve_log_preset").value == serving_view.CUSTOM
    assert len(at.error) == 1 and "position 2 (0.9) is above position 1" in _plain(
        at.error[0].value
    )
    at.text_input(key="serve_log_rates").input("0.9, 0.8, 0.7, 0.6").run()
    fitted = sc.metrics_from_rates([0.9, 0.8, 0.7, 0.6]).fitted_alpha
    at.button(key="serve_log_use").click().run()
    assert at.slider(key="serve_alpha").value == round(fitted, 2)
    assert at.slider(key="serve_k").value == 4
    assert dict(at.query_params.items())["log_rates"] == "0.9, 0.8, 0.7, 0.6"


def test_published_checks_table_shows_each_error_the_median_and_no_raw_none():
    at = open_page(PAGE)
    published = shown_table(at, "signed error (%)")
    table = published.value
    assert published.name.startswith("Published results")
    assert list(published.shown["signed error (%)"]) == [
        f"{100 * r.relative_error:+.0f}%" for r in sp.published_checks()
    ]
    rows = sp.published_checks()
    assert len(table) == len(rows)
    assert list(table["published"])[:2] == ["3.40x", "2.80x"]
    assert list(table["signed error (%)"]) == pytest.approx([100 * r.relative_error for r in rows])
    assert list(table["role"]).count("fits the engine work") == len(sv.ENGINE_WORK_FIT_ROWS)
    cells = [str(v) for column in table.columns for v in table[column]]
    assert "None" not in cells and "nan" not in cells
    assert list(table["c (source)"])[:2] == ["0.020", "0.040"]
    assert "not given" in list(table["c (source)"]) and "—" in list(table["c (model)"])
    median, used, _ = sp.error_summary(rows)
    text = " ".join(_plain(m.value) for m in at.markdown)
    signed = sp.signed_median(rows)
    assert f"Over the {used} rows that test the model: median |error| **{median:.0%}**" in text
    assert f"signed median **{signed:+.0%}**" in text and "under-predicts" in text
    captions = " ".join(c.value for c in at.caption)
    assert "Table 2 (Sec. 4.1)" in captions and "Table 4 (Appendix A.3)" in captions


def test_the_h200_section_shows_measured_beside_model_and_switches_context():
    at = open_page(PAGE)
    v = _figure(at, "v(4) on one H200, 1,024 tokens")
    assert {"measured, faster kernel per shape", "model (per-layer roofline)"} <= _names(v)
    at.radio(key="serve_meas_n").set_value(4096).run()
    at.selectbox(key="serve_meas_k").set_value(8).run()
    v = _figure(at, "v(8) on one H200, 4,096 tokens")
    symbols = _trace(v, "measured, faster kernel per shape")["marker"]["symbol"]
    assert symbols[-1] == "square-open" and symbols[-2] == "square"  # 256 x 4,096: no fit
    assert any("more than one H200 holds" in c.value for c in at.caption)
    assert any("CUDA graphs on" in c.value for c in at.caption)


def test_presenter_view_folds_the_inputs_and_keeps_the_link():
    at = open_page(PAGE, {"present": "1"})
    assert not at.exception
    inputs = next(e for e in at.expander if "Inputs" in e.label)
    assert not inputs.proto.expanded
    assert at.query_params.get("present") in ("1", ["1"])


def test_a_measurement_that_failed_gives_no_point_and_says_why(monkeypatch):
    reason = serving_view.model_pairs_work.Unmeasured(
        "The measurement of this server's costs did not finish in 120 s"
    )
    monkeypatch.setattr(serving_view.model_pairs_work, "get_costs", lambda *args, **kwargs: reason)
    at = open_page(PAGE)
    assert not at.exception
    assert any("did not finish in 120 s" in c.value for c in at.caption)
    names = {t.get("name") for f in figures(at) for t in f["data"]}
    assert serving_figures.SERVER_NAME not in names

    def busy(*args, **kwargs):
        raise RuntimeError("Too many requests wait already")

    monkeypatch.setattr(serving_view.model_pairs_work, "get_costs", busy)
    at = open_page(PAGE)
    assert not at.exception
    assert any("Too many requests wait already" in c.value for c in at.caption)


# --- issue 33 -------------------------------------------------------------------------------
# Item 1: "What this page asks" holds the Serving lab's questions, in normal and presenter
# view, and every number in their answers is what this page's own code computes.


def _shown_questions(at) -> list[str]:
    return [m.value for m in at.markdown]


@pytest.mark.parametrize("query", [{}, {"present": "1"}], ids=["normal", "presenter"])
def test_what_this_page_asks_holds_the_serving_questions_in_both_views(query):
    at = open_page(PAGE, query)
    assert not at.exception
    labels = [e.proto.label for e in at.get("expander")]
    assert labels[0] == page_questions.BOX_LABEL  # the box comes first, before the inputs
    questions = page_questions.questions_for(PAGE)
    assert len(questions) == 3 and labels.count("Worked answer") == 3
    shown = _shown_questions(at)
    for q in questions:
        assert q.answer in shown and any(q.ask in m for m in shown)
    intro_shown = any(serving_view.INTRO in m for m in shown)
    assert intro_shown  # normal view above the box, presenter view inside it


def test_the_questions_are_about_the_pages_default_setup():
    """The questions write the setup out as numbers: they are checked to be the page's."""
    assert serving_questions.serving_setup() == serving_view.build_setup(serving_view.DEFAULTS)
    acc = serving_view.build_acceptance(serving_view.DEFAULTS)
    assert (acc.k, acc.alpha) == (serving_questions.SERVING_K, serving_questions.SERVING_ALPHA)
    case = serving_cases.WHY["k_large"].settings
    assert serving_view.build_setup(case) == serving_questions.serving_setup()
    batch, alpha, k = serving_questions.K_LARGE
    assert (case["batch"], case["alpha"], case["k"]) == (batch, alpha, k)
    assert "K too large" in serving_questions.questions()[2].ask
    assert serving_cases.WHY["k_large"].label == "K too large"


def _facts(i: int) -> dict[str, float]:
    return dict(serving_questions.questions()[i].facts)


def test_every_number_of_the_serving_answers_is_what_the_page_computes():
    """Recomputed from the page's own Result (view.compute), as its headline and charts
    show them, for the defaults and for the "K too large" case."""
    r = serving_view.compute(serving_view.DEFAULTS)
    s, b = r.sweep, r.break_even
    grid = list(s.batch)
    at = {n: grid.index(n) for n in (1, r.b_fit)}
    one = _facts(0)
    assert one["break-even"] == b == 133 and one["fits"] == r.b_fit
    assert one["w1"] == pytest.approx(float(s.w[at[1]]))
    assert one["E"] == pytest.approx(s.expected)
    assert one["speedup 1"] == pytest.approx(s.speedup[at[1]])
    assert one["c1"] == pytest.approx(s.c[at[1]]) and one["v1"] == pytest.approx(s.v[at[1]])
    assert one["price at"] > s.expected > one["price before"]  # the break-even, in the answer
    assert one["speedup before"] >= 1.0
    assert f"At batch 1: {one['speedup 1']:.2f}x" in _answer(open_page(PAGE))
    two = _facts(1)
    assert two["bound"] == r.compute_bound and two["tokens per pass"] == r.compute_bound * 5
    assert two["v break-even"] == pytest.approx(sv.verify_cost(r.setup, 4, b))
    assert two["v fits"] == pytest.approx(s.v[at[r.b_fit]])
    assert two["weights GB"] == pytest.approx(r.setup.target.weight_bytes / 1e9)
    case = serving_view.compute(serving_cases.WHY["k_large"].settings)
    cs, i = case.sweep, case.at
    three = _facts(2)
    assert three["speedup"] == pytest.approx(cs.speedup[i]) and three["speedup"] < 1
    assert three["c"] == pytest.approx(cs.c[i]) and three["v"] == pytest.approx(cs.v[i])
    assert three["E"] == pytest.approx(cs.expected)
    assert three["best"] == cs.best_k[i] and three["best speedup"] == pytest.approx(
        cs.best_speedup[i]
    )
    lesson = serving_cases.lesson_for("k_large", case, serving_cases.WHY["k_large"].settings)
    for said in (f"{three['speedup']:.2f}x", f"{three['percent']:.1f}%", f"v = {three['v']:.2f}"):
        assert said in lesson  # the question and the case's lesson on the page agree


# Item 19: which model pair each "this server" number is about.


def test_this_servers_point_names_its_pair_and_why_it_is_not_the_model_pair_labs():
    from specdec_core import lm
    from specdec_ui.model_pairs import work as model_pairs_work

    at = open_page(PAGE)
    said = " ".join(_plain(c.value) for c in at.caption)
    assert f"running the Model pair lab's {lm.PAIRS[serving_view.SERVER_PAIR].label} pair" in said
    lab = lm.PAIRS[model_pairs_work.DEFAULT_PAIR].label
    assert f"another pair ({lab}) at K = {model_pairs_work.DEFAULT_K}" in said
    assert serving_view.SERVER_PAIR != model_pairs_work.DEFAULT_PAIR
    point = _trace(_figure(at, "Speedup vs batch size"), serving_figures.SERVER_NAME)
    assert point["text"][0].startswith("this server, tiny GPT pair: ")
    assert "tiny GPT (1 layer)" in lm.PAIRS[serving_view.SERVER_PAIR].label


def test_the_kernel_preset_and_the_engine_work_are_inputs_that_change_the_answer():
    """The tuned kernel makes the verify cheaper at batch 64; no engine work makes a round
    cheaper; the caption's context sentence follows the kernel's r (the core's)."""
    at = open_page(PAGE)
    assert at.selectbox(key="serve_kernel").value == sv.DEFAULT_KERNEL.key
    assert at.number_input(key="serve_work").value == pytest.approx(1e3 * sv.DEFAULT_ENGINE_WORK_S)
    at.number_input(key="serve_batch").set_value(64).run()
    v_torch = float(_metric(at, "v: verify of 5 tokens / step"))
    speed_with_work = _answer(at)
    at.selectbox(key="serve_kernel").set_value("tuned").run()
    assert not at.exception and not at.error
    assert float(_metric(at, "v: verify of 5 tokens / step")) < v_torch
    r = serving_view.compute({**serving_view.DEFAULTS, "batch": 64, "kernel": "tuned"})
    captions = " ".join(_plain(c.value) for c in at.caption)
    ratio = sv.attention_ratio(r.setup, 5)
    assert f"costs r = {ratio:.2f} times one token's" in captions
    at.number_input(key="serve_work").set_value(0.0).run()
    assert not at.exception and _answer(at) != speed_with_work
    bare = serving_view.compute(
        {**serving_view.DEFAULTS, "batch": 64, "kernel": "tuned", "work": 0}
    )
    assert _answer(at).startswith(f"**At batch 64: {bare.sweep.speedup[bare.at]:.2f}x**")
    link = at.query_params if hasattr(at, "query_params") else {}
    del link  # the link itself is checked by the share-link test (every input is in it)


def test_engine_work_beyond_the_cores_limit_in_a_typed_setup_is_refused_by_name():
    with pytest.raises(sc.InvalidParameterError, match="engine work per round = 2 is out of"):
        serving_view.build_setup({**serving_view.DEFAULTS, "work": 2_000.0})
