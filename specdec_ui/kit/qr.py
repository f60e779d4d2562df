"""QR codes of share links, so a class can scan the projector and land on the same state.

Built with ``segno`` (pure Python, no image library needed): a link becomes a PNG that
``st.image`` shows. Black modules on a white quiet zone scan in light and dark themes.
"""

from __future__ import annotations

import io
from functools import lru_cache
from urllib.parse import urlsplit

import segno

MAX_QR_LINK = 1_200  # characters; longer links make a QR too dense to scan off a projector
QR_SCALE = 6  # pixels per module: a version-6 code is 41 modules, 294 px with the border
QR_BORDER = 4  # the quiet zone the QR standard asks for (4 modules)
LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]")


class LinkTooLongError(ValueError):
    """The link has more characters than a QR code on a projector can carry."""


def qr_png(link: str, *, scale: int = QR_SCALE) -> bytes:
    """The QR code of ``link`` as PNG bytes (error correction M, raised when it fits).

    ISO/IEC 18004 (QR), encoded by segno; error level M survives ~15 % damaged modules.
    Raises ``LinkTooLongError`` above ``MAX_QR_LINK`` characters (the link is named
    with its length and the limit) and ``ValueError`` for an empty link.
    """
    if not link:
        raise ValueError("the share link is empty: there is nothing to encode")
    if len(link) > MAX_QR_LINK:
        raise LinkTooLongError(
            f"the share link has {len(link):,} characters; a QR code that can be scanned "
            f"from a projector holds at most {MAX_QR_LINK:,}"
        )
    return _png(link, scale)


@lru_cache(maxsize=256)
def _png(link: str, scale: int) -> bytes:
    """segno's PNG writer, cached per link (the same state is drawn on every rerun)."""
    code = segno.make(link, error="m", micro=False)
    buffer = io.BytesIO()
    code.save(buffer, kind="png", scale=scale, border=QR_BORDER, dark="#000000", light="#ffffff")
    return buffer.getvalue()


def is_local_link(link: str) -> bool:
    """True when the link points at this computer only (a phone cannot open it)."""
    host = urlsplit(link).hostname or ""
    return host in LOCAL_HOSTS or host.startswith("127.")
