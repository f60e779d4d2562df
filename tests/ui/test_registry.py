"""The page registry: every page file is registered once, at the address its old link used."""

import re
from pathlib import Path

import pytest

from specdec_ui import page_questions, registry
from specdec_ui.page_questions import Question
from tests import pages as page_lists

ROOT = Path(__file__).resolve().parents[2]


def test_every_page_file_is_registered_and_every_entry_has_a_unique_address():
    files = {f"pages/scripts/{p.name}" for p in (ROOT / "pages" / "scripts").glob("*.py")}
    registered = {page.path for page in registry.PAGES}
    assert files <= registered
    assert {page.path for page in registry.available_pages()} == files
    for field in ("path", "title", "icon", "url_path"):
        values = [getattr(page, field) for page in registry.PAGES]
        assert len(set(values)) == len(values), field
    assert [page for page in registry.PAGES if page.is_home] == [registry.HOME]


# The addresses of the pages/N_Name.py files that share links and QR codes already use.
OLD_ADDRESSES = {
    "Step_through_a_round",
    "Speedup_explorer",
    "Losslessness_lab",
    "Self_test",
    "Model_pair_lab",
    "Variants_lab",
}


def test_every_old_address_still_opens_its_page():
    assert OLD_ADDRESSES <= {page.url_path for page in registry.PAGES}


def test_pages_holds_one_router_file_per_address_and_nothing_else():
    """Streamlit's old folder mode looks a fresh server's first request up among the files
    at the top of pages/: each address has one, and it only runs the router
    (pages/README.md), so no page script can run without it."""
    files = {p.stem: p.read_text() for p in (ROOT / "pages").glob("*.py")}
    assert set(files) == {page.url_path for page in registry.PAGES if not page.is_home}
    for text in files.values():
        code = [line for line in text.splitlines() if line and not line.startswith('"""')]
        assert code == ["from specdec_ui.router import run_app", "run_app()"]


@pytest.mark.parametrize("page", registry.PAGES, ids=lambda p: p.title)
def test_addresses_are_plain_words_and_icons_are_emoji(page):
    assert re.fullmatch(r"[A-Za-z_]*", page.url_path), page.url_path
    assert page.icon and not page.icon.startswith(":") and page.icon.isprintable()
    assert page.blurb.endswith((".", "?"))


def test_page_info_finds_a_page_by_its_file_and_names_an_unknown_one():
    page = registry.page_info(str(ROOT / "pages" / "scripts" / "speedup.py"))
    assert page.title == "Speedup explorer" and page.url_path == "Speedup_explorer"
    with pytest.raises(KeyError, match="nope.py is not in"):
        registry.page_info("pages/scripts/nope.py")


def test_a_page_still_being_written_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "ROOT", tmp_path)
    (tmp_path / "pages" / "scripts").mkdir(parents=True)
    (tmp_path / "pages" / "scripts" / "home.py").write_text("")
    assert registry.available_pages() == (registry.HOME,)


def test_every_page_is_its_four_files():
    """Script, address file, room (with questions.py exactly when it asks) and entry."""
    assert page_lists.registration_problems(ROOT, registry.PAGES) == []


@pytest.mark.parametrize("page", registry.PAGES, ids=lambda p: p.room)
def test_a_page_that_asks_has_its_questions_and_one_that_does_not_has_none(page):
    found = page_questions.page_questions(page)
    assert bool(found) == page.asks and all(isinstance(q, Question) for q in found)


def test_the_readme_has_a_row_for_every_registered_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert page_lists.readme_page_problems(readme, registry.PAGES) == []
