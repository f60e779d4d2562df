"""Home page (the router's default page): renders cold, links only to pages that exist,
shows the round picture."""

from specdec_ui.registry import PAGES, available_pages
from tests.app.conftest import figures, open_page

ADDRESSES = [page.url_path for page in available_pages() if not page.is_home]


def test_home_renders_without_exception():
    at = open_page("app.py")
    assert not at.exception
    assert not at.error
    assert at.title[0].value.endswith("Speculative Decoding Lab")
    text = " ".join(m.value for m in at.markdown)
    assert "five lines" in " ".join(h.value for h in at.header)
    assert "bonus token" in text and "intern" in " ".join(i.value for i in at.info)


def test_home_links_every_existing_page_and_nothing_else():
    at = open_page("app.py")
    links = at.get("page_link")
    targets = [link.proto.page for link in links]
    assert len(links) == len(ADDRESSES) + 1 >= 4  # a card per page and the teacher's line
    assert links[0].proto.label.startswith("Teaching tomorrow? Start here")  # issue 34
    assert links[0].proto.page == "Teach_with_it"
    for address in ADDRESSES:
        assert address in targets, (address, targets)
    assert all(link.proto.icon for link in links)  # an emoji on every card
    expected_missing = len(PAGES) - 1 - len(ADDRESSES)
    captions = " ".join(c.value for c in at.caption)
    assert (f"{expected_missing} more page(s)" in captions) == (expected_missing > 0)


def test_home_picture_is_one_target_pass_for_four_tokens():
    at = open_page("app.py")
    (timeline,) = figures(at)
    spec = [t for t in timeline["data"] if t["y"][0] == "speculative round"]
    plain = [t for t in timeline["data"] if t["y"][0] == "target alone"]
    assert len(spec) == 4  # three draft steps and one target pass
    assert len(plain) == 4  # four target passes without speculation
    assert any("4 tokens" in a["text"] for a in timeline["layout"]["annotations"])


def test_home_rerun_is_stable():
    at = open_page("app.py")
    at.run()
    assert not at.exception
    assert len(figures(at)) == 1


def test_home_cards_come_in_the_sidebars_order():
    # Row by row (issue 18): two columns filled one after the other read Round, Losslessness,
    # Model pair, then Speedup, Self-test, Variants, unlike the sidebar (and on a phone,
    # where columns stack, in that order too).
    at = open_page("app.py")
    cards = [link.proto.page for link in at.get("page_link")][1:]  # after the teach line
    assert cards == [page.url_path for page in available_pages() if not page.is_home]
