"""The class scenario's bookkeeping (benchmarks/class_load.py), without a server: which
projector refresh shows an answer, what counts as lost, sent against counted, and the
server log's tracebacks in Streamlit's rich frame."""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import class_load  # noqa: E402
import load_test  # noqa: E402
from class_load import ClassRun, Refresh, Sent, answer_latencies, summary  # noqa: E402


def test_an_answer_is_shown_by_the_first_refresh_that_started_after_its_send_came_back():
    sent = [Sent("Home/1", 0.0, 0.2), Sent("Home/1", 1.0, 1.1)]
    refreshes = [
        Refresh("Home/1", 0.1, 0.15, 0),  # started before the first Send came back
        Refresh("Home/1", 0.5, 0.6, 1),
        Refresh("Home/1", 1.5, 1.7, 2),
    ]
    latencies, problems, stale = answer_latencies(sent, refreshes)
    assert (problems, stale) == ([], 0)
    assert latencies == [0.6 - 0.0, 1.7 - 1.0]


def test_a_stale_refresh_counts_and_the_answer_waits_for_the_refresh_that_shows_it():
    sent = [Sent("Home/1", 0.0, 0.2), Sent("Home/1", 0.1, 0.3)]
    refreshes = [Refresh("Home/1", 0.5, 0.6, 1), Refresh("Home/1", 1.5, 1.6, 2)]
    latencies, problems, stale = answer_latencies(sent, refreshes)
    assert (problems, stale) == ([], 1)
    assert latencies == [0.6 - 0.0, 1.6 - 0.1]  # the second answer shows at the second
    latencies, problems, stale = answer_latencies(sent, refreshes[:1])
    assert problems == ["Home/1: an answer never shown on the projector"] and stale == 1


def test_an_answer_no_refresh_of_its_question_followed_is_never_shown():
    sent = [Sent("Home/2", 0.0, 0.2)]
    latencies, problems, _ = answer_latencies(sent, [Refresh("Home/1", 0.5, 0.6, 0)])
    assert latencies == []
    assert problems == ["Home/2: an answer never shown on the projector"]


def test_sent_against_counted_and_rounds_against_pooled():
    run = ClassRun("x", 2, sent=[Sent("Home/1", 0, 0.1), Sent("Home/1", 0, 0.1)])
    run.refreshes = [Refresh("Home/1", 0.2, 0.3, 2)]
    run.counted = {"Home/1": 2}
    run.rounds_sent = run.rounds_counted = 40
    numbers = summary(run)
    assert numbers["problems"] == []
    assert (numbers["sent"], numbers["counted"]) == (2, 2)
    run.counted = {"Home/1": 1}
    run.rounds_counted = 20
    assert summary(run)["problems"] == [
        "Home/1: 2 answers sent, 1 counted",
        "40 rounds sent, 20 pooled",
    ]
    assert class_load.failed(run)


def test_a_phone_answers_within_the_question_s_range_as_its_widget_sends_it():
    questions = class_load.first_questions()
    assert len(questions) == class_load.N_QUESTIONS
    rng = random.Random(3)
    for q in questions:
        proto_field, value = q.value(rng)
        if q.choices:
            assert (proto_field, value in q.choices) == ("string_value", True)
        else:
            assert proto_field == "double_value" and q.low <= value <= q.high
        assert q.widget.startswith("class_") and "/" not in q.widget


def test_tracebacks_are_found_in_plain_and_in_rich_framed_logs(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(
        "Traceback (most recent call last):\n  File 'x.py', line 1\nValueError: plain\n"
        "\x1b[31m──\x1b[0m \x1b[1;31mTraceback \x1b[0m(most recent call last) ──\n"
        "\x1b[31m \x1b[0m /site-packages/streamlit/x.py:1 in f\n"
        "────────────\n"
        "\x1b[1;91mTypeError: \x1b[0m'str' object\n"
        "INFO fine\n"
    )
    assert load_test.tracebacks(log) == ["ValueError: plain", "TypeError: 'str' object"]
    log.write_text("INFO all well\n")
    assert load_test.tracebacks(log) == []
