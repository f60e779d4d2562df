"""AppTest of the "Teach with it" page (pages/scripts/teach.py) and of simple mode (issue 34):
every lesson link opens its page in presenter view on its preset with the step's question on
it; simple mode folds away its sections, stays in the link and across a page switch."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest

from specdec_core import quiz
from specdec_ui.page_questions import questions_for
from specdec_ui.registry import PAGES
from specdec_ui.self_test.view import BASIC_KINDS, SIMPLE_NOTE
from specdec_ui.teach.lesson import LESSON, LESSON_MINUTES
from tests.app.conftest import open_app, open_page

PAGE = "pages/scripts/teach.py"
HOME = "pages/scripts/home.py"
SERVING = "pages/scripts/serving.py"
MODEL_PAIR = "pages/scripts/model_pairs.py"
SELF_TEST = "pages/scripts/self_test.py"
# The widget that shows a page's preset, and the link parameter it must show.
PRESET_WIDGETS = {
    "pages/scripts/round.py": [("selectbox", "round_preset", "preset")],
    "pages/scripts/speedup.py": [("selectbox", "speed_preset", "preset")],
    "pages/scripts/losslessness.py": [("selectbox", "lab_preset", "preset")],
    MODEL_PAIR: [("slider", "lm_k", "k"), ("slider", "lm_temperature", "t")],
    SERVING: [("selectbox", "serve_hw", "hw"), ("number_input", "serve_batch", "batch")],
    SELF_TEST: [("selectbox", "quiz_kind", "kind")],
}
SERVING_ADVANCED = (
    "What do the numbers in my engine's log mean?",
    "Measured on one GPU: the model against an H200",
    "The model against published results",
    "What the model leaves out",
)
ENGINE_LOG = "Your run as an engine would log it"


def _script(url: str) -> tuple[str, dict[str, str]]:
    """The page script a lesson link opens, and its query."""
    parts = urlsplit(url)
    address = parts.path.removeprefix("./")
    page = next(p for p in PAGES if p.url_path == address)
    return page.path, dict(parse_qsl(parts.query))


def _links(at) -> list[str]:
    return [button.proto.url for button in at.get("link_button")]


def _headers(at) -> set[str]:
    return {h.value for h in at.header}


def test_the_teach_page_lists_the_fifty_minute_lesson_with_a_link_and_question_per_step():
    at = open_page(PAGE)
    assert not at.exception and not at.error
    assert sum(step.minutes for step in LESSON) == LESSON_MINUTES == 50
    links = _links(at)
    assert len(links) == len(LESSON)
    text = " ".join(m.value for m in at.markdown)
    for step, url in zip(LESSON, links, strict=True):
        assert url == step.href(present=True)
        assert _script(url)[0] == step.page
        if step.ask() is not None:  # the page's own question, by reference
            assert step.ask() in questions_for(step.page)
            assert step.ask().ask in text
    assert [b.proto.id.rsplit("-", 1)[-1] for b in at.get("download_button")] == [
        "teach_sheet",
        "teach_key",
        "teach_plan",
    ]
    assert at.selectbox(key="teach_sheet_page").options == [
        p.title for p in PAGES if p.exists and questions_for(p.path)
    ]


@pytest.mark.parametrize("index", range(len(LESSON)), ids=lambda i: LESSON[i].title)
def test_every_lesson_link_opens_its_page_in_presenter_view_on_its_preset(index):
    step = LESSON[index]
    script, query = _script(step.href(present=True))
    at = open_page("app.py" if script == HOME else script, query)  # Home: the router's
    assert not at.exception and not at.error
    assert not [w.value for w in at.warning if "not valid" in w.value]  # the link was read
    assert at.toggle(key="presenter_toggle").value is True
    assert at.query_params.get("present") in ("1", ["1"])
    for kind, key, param in PRESET_WIDGETS.get(script, []):
        value = getattr(at, kind)(key=key).value
        assert str(value) == query[param], (key, value, query[param])
    if step.ask() is not None:  # the question to ask is on the page it opens
        assert any(step.ask().ask in m.value for m in at.markdown)


def test_simple_mode_folds_the_serving_labs_engine_log_and_model_checks():
    normal = open_page(SERVING)
    assert not normal.exception
    assert set(SERVING_ADVANCED) <= _headers(normal)
    simple = open_page(SERVING, {"simple": "1"})
    assert not simple.exception and not simple.error
    assert simple.toggle(key="simple_toggle").value is True
    assert not set(SERVING_ADVANCED) & _headers(simple)
    assert "Why is mine slower?" in _headers(simple)  # the lesson itself stays
    assert simple.query_params.get("simple") in ("1", ["1"])


def test_simple_mode_folds_the_model_pair_labs_guard_and_engine_log():
    normal = open_page(MODEL_PAIR, {"k": "3"})
    assert not normal.exception
    assert ENGINE_LOG in _headers(normal)
    assert normal.radio(key="lm_draft") is not None
    simple = open_page(MODEL_PAIR, {"k": "3", "simple": "1", "draft": "adaptive"})
    assert not simple.exception and not simple.error
    assert ENGINE_LOG not in _headers(simple)
    assert "lm_draft" not in [r.key for r in simple.radio]  # no "Steps aside"
    assert "Where the guard stepped aside, and why" not in _headers(simple)
    assert simple.query_params.get("draft") in ("fixed", ["fixed"])  # K fixed, said in the link


def test_simple_mode_offers_the_self_test_only_basic_kinds():
    normal = open_page(SELF_TEST)
    assert normal.selectbox(key="quiz_kind").options[1:] == [
        str(k) for k in _labels(quiz.QUESTION_KINDS)
    ]
    simple = open_page(SELF_TEST, {"simple": "1", "kind": "tree"})
    assert not simple.exception and not simple.error
    kind = simple.selectbox(key="quiz_kind")
    assert kind.value == "mixed"  # a tree question is not offered: Mixed of the basic ones
    assert kind.options[1:] == [str(k) for k in _labels(BASIC_KINDS)]
    assert any(c.value == SIMPLE_NOTE for c in simple.caption)  # said, not silent
    assert not any(c.value == SIMPLE_NOTE for c in normal.caption)
    seen = set()
    for _ in range(len(quiz.QUESTION_KINDS)):  # Mixed cycles through the basic kinds only
        seen.add(simple.subheader[0].value.split(": ", 1)[1])  # "Question n: its kind"
        simple.button(key="quiz_new").click().run()
    assert not simple.exception
    assert len(seen) == len(BASIC_KINDS)
    assert not any("multi-draft" in s.lower() or "tree" in s.lower() for s in seen)


def _labels(kinds) -> list[str]:
    from specdec_ui.words import QUESTION_KIND_LABELS

    return [QUESTION_KIND_LABELS[k] for k in kinds]


def test_simple_mode_stays_in_the_link_across_a_page_switch_and_the_toggle_ends_it():
    at = open_app(None, {"simple": "1"})
    assert not at.exception
    assert at.toggle(key="simple_toggle").value is True
    at.switch_page(SERVING)
    at.run()
    assert not at.exception
    assert at.toggle(key="simple_toggle").value is True
    assert at.query_params.get("simple") in ("1", ["1"])
    assert not set(SERVING_ADVANCED) & _headers(at)
    at.switch_page(PAGE)
    at.run()
    assert all("simple=1" in url for url in _links(at))  # the lesson's links keep it
    at.toggle(key="simple_toggle").set_value(False).run()
    assert "simple" not in at.query_params
    assert not any("simple=1" in url for url in _links(at))
    at.switch_page(SERVING)
    at.run()
    assert set(SERVING_ADVANCED) <= _headers(at)
