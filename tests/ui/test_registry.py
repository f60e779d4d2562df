"""The page registry: every page file is registered once, at the address pages/ gave it."""

from pathlib import Path

import pytest
from streamlit.source_util import page_icon_and_name

from specdec_ui import registry

ROOT = Path(__file__).resolve().parents[2]


def test_every_page_file_is_registered_and_every_entry_has_a_unique_address():
    files = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")}
    registered = {page.path for page in registry.PAGES}
    assert files <= registered
    assert {page.path for page in registry.available_pages()} == files
    for field in ("path", "title", "icon", "url_path"):
        values = [getattr(page, field) for page in registry.PAGES]
        assert len(set(values)) == len(values), field
    assert [page for page in registry.PAGES if page.is_home] == [registry.HOME]


@pytest.mark.parametrize("page", registry.PAGES, ids=lambda p: p.title)
def test_addresses_are_the_pages_folder_names_and_icons_are_emoji(page):
    if not page.is_home:
        assert page.url_path == page_icon_and_name(Path(page.path))[1]
    assert page.icon and not page.icon.startswith(":") and page.icon.isprintable()
    assert page.blurb.endswith((".", "?"))


def test_page_info_finds_a_page_by_its_file_and_names_an_unknown_one():
    page = registry.page_info(str(ROOT / "pages" / "2_Speedup_explorer.py"))
    assert page.title == "Speedup explorer" and page.url_path == "Speedup_explorer"
    with pytest.raises(KeyError, match="7_Nope.py is not in"):
        registry.page_info("pages/7_Nope.py")


def test_a_page_still_being_written_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "ROOT", tmp_path)
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "0_Home.py").write_text("")
    assert registry.available_pages() == (registry.HOME,)
