"""Serving lab: when is speculative decoding fast? Hardware, batch size and engine logs.

A per-layer roofline of one decoding step (specdec_core.serving) for GPUs and models from
their spec sheets, this server's measured costs beside it, an H200 measured for this
project, and published results. The sections live in specdec_ui.serving.view and its
sibling views; this file only calls them in order.
"""

from __future__ import annotations

import specdec_core as sc
from specdec_core import serving as sv
from specdec_ui.kit.page_frame import inputs_area, page_frame
from specdec_ui.kit.simple_mode import simple
from specdec_ui.kit.widgets import show_error, show_source
from specdec_ui.serving import cases, checks, engine_log, load_view, view

with page_frame(__file__, view.INTRO) as frame:
    state = view.page_state()
    view.start(state)
    state.warn_link()
    with inputs_area(view.INPUTS_LABEL):
        view.inputs(state)
    chosen = state.keep()

    result = view.try_compute(chosen)
    if isinstance(result, sc.SpecDecError):
        show_error(result)
        result = None

    if result is not None:
        reading = view.this_server_costs(result.sweep.k)
        view.headline(result)
        if not frame.presenting:
            view.metrics(result)
        view.charts(result, reading)
        if frame.presenting:  # projector: the answer and its chart first
            view.metrics(result)
        view.server_note(result, reading)
        load_view.under_load(result)

    cases.why_slower(state, result, chosen)
    if not simple():  # a first lesson: no model checks, no engine logs
        checks.measured_section(state)
        engine_log.engine_log_decoder(state, chosen)
        checks.published_section()
        checks.leaves_out()
    view.share(state, state.keep())
    show_source(
        sv.step_cost,
        sv.verify_cost,
        sv.round_speedup,
        sv.break_even_batch,
        sc.metrics_from_vllm_counters,
    )
