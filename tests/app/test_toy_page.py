"""A toy page registered the documented way (CONTRIBUTING's "A new page": four files) is in
every list of pages with no other edit, and its questions' guard fails loudly without them.

The toy's four files are written to a temporary tree: its script ``pages/scripts/toy.py``,
its address file ``pages/Toy_page.py``, its room ``specdec_ui/toy/`` (``__init__.py`` and
``questions.py``) and one ``PageInfo`` added to the registry. The real pages stand in the
same tree as links, so the registry sees eleven pages; ``specdec_ui`` finds the toy room
through its package path.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import specdec_ui
from specdec_ui import page_questions, registry
from specdec_ui.classroom import asking
from specdec_ui.teach import lesson
from tests import pages as page_lists

ROOT = Path(__file__).resolve().parents[2]
UI = "specdec_ui"
TOY = registry.PageInfo("pages/scripts/toy.py", "Toy page", "🧸", "Toy_page", "A toy page.")
FILES = {
    "pages/scripts/toy.py": (
        '"""A toy page."""\n\nfrom specdec_ui.kit.page_frame import page_frame\n'
        "from specdec_ui.toy import view\n\n"
        'with page_frame(__file__, "A toy page for the registry test.") as frame:\n'
        "    view.body()\n"
    ),
    "pages/Toy_page.py": (
        '"""/Toy_page in Streamlit\'s folder mode: runs the router (pages/README.md)."""\n\n'
        "from specdec_ui.router import run_app\n\nrun_app()\n"
    ),
    "specdec_ui/toy/__init__.py": '"""The toy page\'s room."""\n',
    "specdec_ui/toy/view.py": "import streamlit as st\n\n\ndef body():\n    st.write('toy body')\n",
    "specdec_ui/toy/questions.py": (
        "from specdec_ui.page_questions import Question\n\n\n"
        "def questions():\n"
        '    return (Question("What is 1 + 1?", "**2**", (("sum", 2.0),), number="sum"),)\n'
    ),
}


def _forget_toy() -> None:
    for name in [m for m in sys.modules if m.split(".")[:2] == ["specdec_ui", "toy"]]:
        del sys.modules[name]
    importlib.invalidate_caches()  # the toy's files change between checks
    asking.class_questions.cache_clear()


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The tree with the toy's four files, the real pages linked in beside it."""
    for page in registry.PAGES:
        links = [page.path, f"specdec_ui/{page.room}"]
        links += [] if page.is_home else [f"pages/{page.url_path}.py"]
        for rel in links:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).symlink_to(ROOT / rel)
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    monkeypatch.setattr(registry, "ROOT", tmp_path)
    monkeypatch.setattr(registry, "PAGES", (*registry.PAGES, TOY))  # the one registry entry
    monkeypatch.setattr(specdec_ui, "__path__", [*specdec_ui.__path__, str(tmp_path / UI)])
    _forget_toy()
    yield tmp_path
    _forget_toy()


def test_the_toy_is_four_files_and_the_real_pages_are_too(toy):
    assert page_lists.registration_problems(toy, registry.PAGES) == []
    assert page_lists.registration_problems(ROOT, registry.PAGES[:-1]) == []


def test_the_toy_is_in_every_list_of_pages(toy):
    assert page_lists.addresses()[-1] == "/Toy_page"  # the browser tests' lists
    assert page_lists.pages()[0] == registry.HOME and TOY in page_lists.pages()
    assert TOY in registry.available_pages()  # the router, Home's cards
    assert TOY in lesson.worksheet_pages()  # the Teach page's worksheets
    assert [c.question.ask for c in asking.class_questions() if c.page == TOY] == ["What is 1 + 1?"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert page_lists.readme_page_problems(readme, registry.PAGES) == [
        "README.md's page table has no row '| **Toy page** | ... |' for pages/scripts/toy.py"
    ]


def test_a_per_page_table_without_the_toy_gives_it_the_generic_check(toy):
    """No test's table needs a row for the toy: it gets each table's default (its Tab stops
    bounded by TAB_STOPS_NEW_PAGE, its charts checked as found, every link name fuzzed); a
    row pins a page closer; a row of a gone page is reported."""
    from tests.app.test_fuzz_pages import ANY_PAGE_PARAMS, PAGE_PARAMS

    tab_stops = {address: 30 for address in page_lists.addresses()[:-1]}
    assert page_lists.expected(tab_stops, page_lists.address(TOY), 40) == 40
    assert page_lists.expected({"/Toy_page": 1}, "/Toy_page", 40) == 1
    assert page_lists.stale_keys({"/Gone": 1, "/": 2}, page_lists.addresses()) == ["/Gone"]
    assert TOY.path not in PAGE_PARAMS
    assert page_lists.expected(PAGE_PARAMS, TOY.path, ANY_PAGE_PARAMS) == ANY_PAGE_PARAMS


def test_the_toy_page_opens_with_its_questions(toy):
    at = AppTest.from_file(str(toy / TOY.path), default_timeout=30).run()
    assert not at.exception
    assert page_questions.BOX_LABEL in [e.proto.label for e in at.get("expander")]
    assert any("What is 1 + 1?" in m.value for m in at.markdown)


def test_a_page_that_asks_without_questions_fails_loudly(toy):
    (toy / "specdec_ui/toy/questions.py").unlink()
    _forget_toy()
    with pytest.raises(page_questions.MissingQuestions, match="specdec_ui/toy/questions.py does"):
        page_questions.questions_for(TOY.path)
    assert page_lists.registration_problems(toy, registry.PAGES) == [
        "Toy page: asks=True but specdec_ui/toy/ has no questions.py"
    ]
    at = AppTest.from_file(str(toy / TOY.path), default_timeout=30).run()
    assert len(at.exception) == 1  # the page fails (the message above is in the server's log)
    (toy / "specdec_ui/toy/questions.py").write_text("def questions():\n    return ()\n")
    _forget_toy()
    with pytest.raises(page_questions.MissingQuestions, match="no questions.. returning"):
        page_questions.questions_for(TOY.path)


def test_a_page_that_asks_nothing_says_so_in_its_entry(toy, monkeypatch):
    quiet = registry.PageInfo(TOY.path, TOY.title, TOY.icon, TOY.url_path, TOY.blurb, asks=False)
    monkeypatch.setattr(registry, "PAGES", (*registry.PAGES[:-1], quiet))
    assert page_questions.questions_for(TOY.path) == ()
    assert page_lists.registration_problems(toy, registry.PAGES) == [
        "Toy page: asks=False but specdec_ui/toy/ has a questions.py"
    ]
    assert quiet not in lesson.worksheet_pages()
