"""Serving lab: when is speculative decoding fast? Hardware, batch size and engine logs.

A roofline model of one decoding step (specdec_core.serving) for GPUs and models from
their spec sheets, with this server's measured costs beside them. The sections live in
specdec_ui.serving_view; this file only calls them in order.
"""

from __future__ import annotations

import specdec_core as sc
from specdec_core import serving as sv
from specdec_ui import serving_view as view
from specdec_ui.page_frame import inputs_area, page_frame
from specdec_ui.widgets import show_error, show_source

with page_frame(__file__, view.INTRO) as frame:
    state = view.page_state()
    view.start(state)
    state.warn_link()
    with inputs_area(view.INPUTS_LABEL):
        view.inputs(state)
    chosen = state.keep()

    try:
        result = view.compute(chosen)
    except sc.SpecDecError as err:
        show_error(err)
        result = None

    if result is not None:
        reading = view.this_server_costs(result.sweep.k)
        view.headline(result)
        if not frame.presenting:
            view.metrics(result)
        view.charts(result, reading)
        if frame.presenting:  # projector: the answer and its chart first
            view.metrics(result)
        view.server_note(result.sweep.k, reading, result.sweep.alpha)

    view.why_slower(state, result)
    view.engine_log_decoder(state, chosen)
    view.published_section()
    view.leaves_out()
    view.share(state, chosen)
    show_source(
        sv.step_time,
        sv.verify_cost,
        sv.serving_speedup,
        sv.break_even_batch,
        sc.metrics_from_rates,
    )
