"""Losslessness lab: simulate many rounds and test that the output follows p."""

from specdec_ui.kit.page_frame import inputs_area, page_frame
from specdec_ui.losslessness import explain, view

INTRO = (
    "Speculative sampling claims that every token it emits follows the target p exactly, "
    "however bad the draft q is. Do not take it on trust: simulate many rounds, count what "
    "comes out, and test the counts against p. Then switch on a bug and watch the same test "
    "catch it."
)

with page_frame(__file__, INTRO) as frame:
    page = view.page_state()
    page.warn_link()
    view.class_pool()  # a phone that joined a class adds its rounds to the class's pool
    with inputs_area("⚙️ Inputs: p and q, K, rounds, seed, algorithm"):
        run_now = view.inputs(page)

    applied = view.applied_settings(page, run_now)
    if not frame.presenting:  # projector: the verdict and its chart first, explanations below
        view.variant_note(applied)
    run = view.simulate(applied)
    if not frame.presenting:
        view.preset_caption(run)
    view.verdict(run)
    if frame.presenting:
        explain.difference_chart(run)
        view.variant_note(applied)
        view.preset_caption(run)
    explain.overlap(run)
    explain.chi_square_tests(run)
    if not frame.presenting:
        explain.difference_chart(run)
    explain.engine_numbers(run)
    explain.counts_and_download(run)
    view.share(page, applied)
    view.source_code(applied)
