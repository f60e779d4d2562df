"""Self-test: the seed's quick questions and fresh numeric ones, with worked answers."""

from __future__ import annotations

import specdec_core as sc
from specdec_core import quiz
from specdec_ui.kit.page_frame import asks, page_frame
from specdec_ui.kit.presenter import page_heading
from specdec_ui.kit.widgets import show_source
from specdec_ui.self_test import view

INTRO = (
    "Check yourself: first the quick questions from the worked examples, then as many fresh "
    "numeric questions as you like. Every answer shows how to get there; only your first "
    "try at each question counts for the score."
)

with page_frame(__file__) as frame:
    state = view.page_state()
    # no result to come first: the intro is never folded; the questions for the class are
    page_heading(frame.info, INTRO, presenting=False, questions=asks(frame.info))
    state.warn_link()
    score_box = view.score_box()

    view.seed_questions()
    view.fresh_inputs()
    chosen = state.keep()
    fresh = view.fresh_question(chosen)
    view.question_and_answer_box(fresh)
    view.verdict_and_worked_answer(fresh)

    view.score(score_box)
    view.share(state, chosen, fresh)
    show_source(sc.acceptance_probability, sc.residual_distribution, quiz.make_question)
