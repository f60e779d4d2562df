"""Safe text: user-typed strings never reach markdown, HTML or LaTeX raw."""

from __future__ import annotations

import html
import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&:])")


def md_escape(text: object) -> str:
    """Escape a string for st.markdown / st.error / st.caption bodies.

    Every markdown-active character gets a backslash, so a label such as
    ``![x](http://evil/p.png)`` or ``<img onerror=...>`` shows as typed and
    loads nothing.
    """
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def plotly_escape(text: object) -> str:
    """Escape a string for plotly text (tick labels, hover, annotations).

    plotly.js reads a small HTML subset in text (``<b>``, ``<a href>``);
    escaping ``<``, ``>`` and ``&`` makes it show the characters instead.
    """
    return html.escape(str(text), quote=False)
