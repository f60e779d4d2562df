"""The QR code of a share link decodes back to exactly that link (zxing-cpp, a real decoder)."""

from __future__ import annotations

import io

import pytest
import zxingcpp
from PIL import Image

from specdec_ui.kit.qr import MAX_QR_LINK, LinkTooLongError, is_local_link, qr_png

LINKS = [
    "https://specdec.example.org/Step_through_a_round?mode=preset&preset=000-rejection&step=3",
    "https://specdec.example.org/Speedup_explorer?alpha=0.6&k=3&c_q=5&c_p=100",
    "http://192.168.1.20:8501/Losslessness_lab?variant=resample_from_p&rounds=100000&seed=7",
    "https://specdec.example.org/Step_through_a_round?labels=%3Cscript%3E%2C%C3%A9%2C%E2%98%85",
]


def decode(png: bytes) -> list[str]:
    """Every QR code zxing-cpp finds in a PNG, as text."""
    image = Image.open(io.BytesIO(png)).convert("L")
    return [code.text for code in zxingcpp.read_barcodes(image)]


@pytest.mark.parametrize("link", LINKS)
def test_qr_decodes_to_the_link(link):
    png = qr_png(link)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert decode(png) == [link]


def test_a_long_link_up_to_the_limit_still_decodes():
    link = "https://specdec.example.org/Step_through_a_round?p=" + "0.1%2C" * 400
    link = link[:MAX_QR_LINK]
    assert decode(qr_png(link)) == [link]


def test_the_decoder_tells_two_links_apart():
    # Proof the decode check can fail: a code of another link does not decode to ours.
    assert decode(qr_png(LINKS[0])) != [LINKS[1]]


def test_too_long_and_empty_links_are_refused_with_a_reason():
    with pytest.raises(LinkTooLongError, match=r"1,201 characters.*at most 1,200"):
        qr_png("h" * (MAX_QR_LINK + 1))
    with pytest.raises(ValueError, match="empty"):
        qr_png("")


@pytest.mark.parametrize(
    ("link", "local"),
    [
        ("http://localhost:8501/x", True),
        ("http://127.0.0.1:8501/x?a=1", True),
        ("http://[::1]:8501/", True),
        ("http://192.168.1.20:8501/", False),
        ("https://specdec.streamlit.app/Speedup_explorer", False),
    ],
)
def test_local_links_are_recognised(link, local):
    assert is_local_link(link) is local
