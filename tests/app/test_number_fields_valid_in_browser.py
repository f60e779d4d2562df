"""Every number field's value sits on the browser's step grid (issue 33 item 6).

A browser marks an ``<input type=number>`` "invalid" (and a screen reader says "invalid
entry") when its value is not min + n * step: a c_p field with min 0.001 and step 1 read
invalid on every whole number. This opens every registered page with its defaults and checks
each number field's value against its own min and step, as Chromium's step check does
(decimal arithmetic, step base = min, or 0 without one).
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from specdec_ui.registry import available_pages
from tests.app.conftest import open_app


def on_grid(value: float, minimum: float | None, step: float) -> bool:
    """Whether ``value`` is ``minimum + n * step`` for a whole n (the HTML step check)."""
    base = Decimal(repr(minimum)) if minimum is not None else Decimal(0)
    ratio = (Decimal(repr(value)) - base) / Decimal(repr(step))
    return ratio == ratio.to_integral_value()


def test_the_grid_check_flags_the_reported_field():
    assert not on_grid(40.0, 0.001, 1.0)  # the c_p field of the report
    assert on_grid(40.0, 0.001, 0.001) and on_grid(50_000, 1_000, 1_000)
    assert not on_grid(50_000, 1_000, 10_000)


@pytest.mark.parametrize("page", [p.path for p in available_pages()])
def test_every_number_field_opens_on_its_step_grid(page):
    at = open_app(None if page.endswith("home.py") else page)  # through the router
    assert not at.exception
    off = [
        (field.key, field.value, field.min, field.step)
        for field in at.number_input
        if field.value is not None and not on_grid(field.value, field.min, field.step)
    ]
    assert not off, f"{page}: fields a browser reads as invalid: {off}"
