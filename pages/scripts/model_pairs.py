"""Model pair lab: real speculative decoding with small language models, in numpy."""

import specdec_core.lm as lm
from specdec_ui.kit.page_frame import inputs_area, page_frame
from specdec_ui.kit.simple_mode import simple
from specdec_ui.kit.widgets import show_source
from specdec_ui.model_pairs import guard, rounds, speed, view

INTRO = (
    "Real language models, trained on Python's own documentation, run speculative decoding "
    "here in numpy. The **draft** q proposes K tokens, the **target** p checks them all in "
    "one call, keeps each with probability min(1, p/q), resamples the first rejected one "
    "and adds a free bonus token when all K survive. Beside it the same target decodes the "
    "same prompt the plain way, one call per token, so you can compare the clocks."
)

with page_frame(__file__, INTRO):
    pairs = lm.available_pairs()
    page = view.page_state(pairs)
    page.warn_link()
    inputs_label = "⚙️ Inputs: model pair, prompt, draft length, K, temperature, seed"
    with inputs_area(inputs_label, folded=view.opened_on_a_step()):
        choice = view.inputs(pairs)

    run = view.fetch_run(choice)
    shown = rounds.round_stepper(run) if choice.stepping else None
    if shown is not None:  # the round's decision and its charts right under the stepper
        rounds.round_detail(choice, run, shown)
    view.generated_text(choice, run, shown)
    view.quiet_draft_note(choice, run)
    view.counts(choice, run)
    if not simple():  # a first lesson: no guard, no engine log
        guard.draft_lengths(choice, run)
        view.engine_numbers(choice, run)
    view.greedy_verdict(choice, run)
    speed.speed_section(choice, run)

    page.keep()
    page.share(choice.link_params(shown or 1))
    show_source(lm.speculative_generate)
