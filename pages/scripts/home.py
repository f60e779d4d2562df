"""Home: the idea in plain words, a timeline picture, the algorithm in five lines, the cards.

The default page of the router in ``app.py``; the cards come from :mod:`specdec_ui.registry`.
"""

from __future__ import annotations

import specdec_core as sc
from specdec_ui.home import view
from specdec_ui.kit.page_frame import page_frame
from specdec_ui.kit.widgets import accessibility_statement, show_source

with page_frame(__file__):  # the app's own title, not the page's
    view.idea()
    view.teach_line()
    view.timeline()
    view.algorithm_and_numbers()
    view.cards()
    view.start_a_class()
    view.share_and_sources()
    show_source(sc.verify_round)
    accessibility_statement()
