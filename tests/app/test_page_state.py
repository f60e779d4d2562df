"""PageState, the one link -> session -> preset/custom -> warning -> share helper of the pages."""

from streamlit.testing.v1 import AppTest


def _page():
    import streamlit as st

    from specdec_ui.kit.page_state import PageState

    presets = {"small": {"n": 2, "word": "ab"}, "big": {"n": 9, "word": "xyz"}}
    state = PageState("demo", {"preset": "small", "n": 2, "word": "ab"})
    if (link := state.first_visit()) is not None:
        st.session_state["demo_reads"] = st.session_state.get("demo_reads", 0) + 1
        state.start(
            {
                "preset": link.choice("preset", [*presets, "custom"], "small"),
                "n": link.int_in("n", 1, 9, 2),
            },
            link.problems,
        )
    state.restore()
    if not st.session_state.get("demo_hide"):
        st.selectbox(
            "preset",
            [*presets, "custom"],
            key=state.key("preset"),
            on_change=state.apply_preset(presets.get),
        )
        st.slider("n", 1, 9, key=state.key("n"), on_change=state.to_custom())
        st.text_input("word", key=state.key("word"), on_change=state.to_custom())
    values = state.keep()
    state.warn_link()
    state.share({"preset": values["preset"], "n": values["n"], "word": values["word"]})


def _open(query=None) -> AppTest:
    at = AppTest.from_function(_page, default_timeout=30)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    return at.run()


def test_the_link_is_read_once_and_bad_values_warn_once():
    at = _open({"preset": "big", "n": "12"})
    assert not at.exception
    assert at.selectbox(key="demo_preset").value == "big"
    assert at.slider(key="demo_n").value == 2  # 12 is out of range: the default, with a warning
    assert len(at.warning) == 1 and "'n'" in at.warning[0].value
    at.run()
    assert not at.warning and at.session_state["demo_reads"] == 1


def test_presets_custom_and_the_share_link():
    at = _open()
    at.selectbox(key="demo_preset").set_value("big").run()
    assert at.slider(key="demo_n").value == 9 and at.text_input(key="demo_word").value == "xyz"
    at.slider(key="demo_n").set_value(4).run()
    assert at.selectbox(key="demo_preset").value == "custom"
    assert at.query_params == {"preset": "custom", "n": "4", "word": "xyz"}
    assert "?preset=custom&n=4&word=xyz" in [c.value for c in at.code]


def test_values_survive_runs_where_the_widgets_are_not_drawn():
    at = _open()
    at.text_input(key="demo_word").input("kept").run()
    at.session_state["demo_hide"] = True  # another page, or inputs folded away
    at.run()
    at.session_state["demo_hide"] = False
    at.run()
    assert at.text_input(key="demo_word").value == "kept"
    assert at.selectbox(key="demo_preset").value == "custom"


def test_a_value_too_long_for_a_link_is_said():
    at = _open()
    at.text_input(key="demo_word").input("w" * 2_001).run()
    assert any("longer than 2,000 characters" in w.value for w in at.warning)
