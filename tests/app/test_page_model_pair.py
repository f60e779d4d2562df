"""AppTest of the "Model pair lab" page (pages/5_Model_pair_lab.py) and its figures."""

from __future__ import annotations

import numpy as np

from specdec_core.lm import MAX_PROMPT_CHARS, encode_prompt, load_pair, load_tokenizer
from specdec_core.lm import speculative_generate as generate
from specdec_ui import figures_lm as fl
from tests.app.conftest import figures, open_page

PAGE = "pages/5_Model_pair_lab.py"


def output_text(at) -> str:
    return at.text[0].value


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label))


def test_default_render_runs_the_default_pair_and_matches_greedy_decoding():
    at = open_page(PAGE)
    assert not at.exception and not at.error
    text = output_text(at)
    assert text.startswith("Return the number of")
    assert len(text) > len("Return the number of") + 20
    assert metric(at, "Speedup (measured)").endswith("x")
    assert any("identical to the target's own greedy output" in m.value for m in at.markdown)
    fig = figures(at)[0]  # the coloured text
    names = {trace.get("name") for trace in fig["data"]}
    assert any(n and "kept" in n for n in names)


def test_step_mode_walks_the_rounds_and_shows_bars_coins_and_final_token():
    at = open_page(PAGE)
    at.slider(key="lm_temperature").set_value(1.0).run()
    at.radio(key="lm_mode").set_value("Step round by round").run()
    assert not at.exception
    first = output_text(at)
    at.button(key="lm_next").click().run()
    assert not at.exception
    assert len(output_text(at)) > len(first)
    titles = [f["layout"].get("title", {}).get("text", "") for f in figures(at)]
    assert "The coins" in titles
    assert any(t.startswith(("Resample", "Bonus")) for t in titles)
    bars = next(f for f in figures(at) if any(tr.get("name") == "q (draft)" for tr in f["data"]))
    assert any("▶" in str(tr.get("x")) for tr in bars["data"])


def test_a_run_of_every_pair_and_the_gpu_like_switch():
    at = open_page(PAGE)
    for name in at.selectbox(key="lm_pair").options:
        at.selectbox(key="lm_pair").set_value(name).run()
        assert not at.exception and not at.error, name
    at.toggle(key="lm_gpu").set_value(True).run()
    assert not at.exception
    names = [
        tr["y"]
        for f in figures(at)
        for tr in f["data"]
        if tr.get("orientation") == "h" and "measured" in tr.get("y", [])
    ]
    assert any(any(str(y).startswith("GPU-like") for y in ys) for ys in names)


def test_bad_prompts_show_an_error_and_no_traceback():
    at = open_page(PAGE)
    for prompt, fragment in [("naïve", "'ï'"), ("   ", "empty")]:
        at.text_area(key="lm_prompt").set_value(prompt).run()
        assert not at.exception
        assert at.error and fragment in at.error[0].value.replace("\\", "")
    at.text_area(key="lm_prompt").set_value("word " * (MAX_PROMPT_CHARS // 5)).run()
    at.slider(key="lm_tokens").set_value(200).run()
    assert not at.exception
    assert at.error and "context" in at.error[0].value


def test_token_text_figure_escapes_prompt_text_and_marks_each_kind():
    fig = fl.token_text_figure(
        [("<b>x</b>", "prompt"), (" a", "accepted"), ("\n", "bonus"), ("z", "resampled")]
    ).to_plotly_json()
    texts = [t for tr in fig["data"] if tr.get("mode") == "text" for t in tr["text"]]
    assert "&lt;b&gt;x&lt;/b&gt;" in texts and "↵" in texts
    names = " ".join(str(tr.get("name")) for tr in fig["data"])
    assert "✓" in names and "★" in names and "↻" in names
    rows = fl.layout_tokens([("ab", "prompt"), ("\n", "bonus"), ("cd", "accepted")], width=10)
    assert [(r, c) for r, c, _, _ in rows] == [(0, 0), (0, 2), (1, 0)]


def test_round_figures_from_a_real_trace():
    tok = load_tokenizer()
    draft, target = load_pair("bigram-to-5gram")
    res = generate(
        draft,
        target,
        encode_prompt(tok, "The list"),
        k=3,
        max_new_tokens=12,
        temperature=1.0,
        rng=np.random.default_rng(2),
    )
    rnd = res.rounds[0]
    bars = fl.position_bars_figure(rnd.positions, tok.vocab).to_plotly_json()
    assert len([t for t in bars["data"] if t["name"] == "q (draft)"]) == 3
    coins = fl.coin_figure(rnd.positions).to_plotly_json()
    checked = rnd.n_accepted + (rnd.final_kind == "resample")
    assert len(coins["data"][2]["x"]) == checked
    final = fl.final_figure(rnd.final_top, rnd.final_token, tok.vocab, kind=rnd.final_kind)
    assert any(s.startswith("▶") for s in final.to_plotly_json()["data"][0]["x"])
