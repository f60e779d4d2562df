"""Every list of pages the tests walk, read from the registry (``specdec_ui.registry.PAGES``).

A page registered the documented way (CONTRIBUTING's "A new page") is in each list by
construction: the browser tests (accessibility, every page from the sidebar, phone screens,
presenter screens), the AppTest fuzz, the questions' checks and the README's table. What a
test expects of one page in particular (its Tab stops counted, whether it draws charts at its
defaults, the parameters its link reads, its first action) stays in a table in that test, read
through :func:`expected`: a page without a row gets the table's stated default (a generic
check, never none), so a new page needs no edit of any test to be checked; a row pins it
closer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from specdec_ui import registry
from specdec_ui.registry import PageInfo

T = TypeVar("T")


def pages() -> tuple[PageInfo, ...]:
    """The registered pages whose script exists, Home first (the router's pages)."""
    return registry.available_pages()


def address(page: PageInfo) -> str:
    """The page's browser address: ``"/"`` for Home, ``"/Self_test"`` for the Self-test."""
    return f"/{page.url_path}"


def addresses() -> tuple[str, ...]:
    """The browser address of every page the router serves, Home (``"/"``) first."""
    return tuple(address(page) for page in pages())


def expected(table: Mapping[str, T], key: str, default: T) -> T:
    """``table[key]``, what a test pins for page ``key`` (its address or script), or the
    table's ``default`` (the generic check every page gets) where the page has no row."""
    return table.get(key, default)


def stale_keys(table: Mapping[str, object], keys: Iterable[str]) -> list[str]:
    """The entries of a per-page table that name no registered page (a page removed or
    renamed): they would be checked against nothing."""
    return sorted(set(table) - set(keys))


def readme_page_problems(readme: str, listed: Iterable[PageInfo]) -> list[str]:
    """What the README's page table lacks: a row that names each registered page in bold,
    ``| **<title>** ... |``."""
    rows = [line for line in readme.splitlines() if line.startswith("|")]
    return [
        f"README.md's page table has no row '| **{page.title}** | ... |' for {page.path}"
        for page in listed
        if not any(f"**{page.title}**" in row for row in rows)
    ]


def registration_problems(root: Path, listed: Iterable[PageInfo]) -> list[str]:
    """What each page lacks of its four files under ``root``: its script, its address file
    (which only runs the router), its room (an ``__init__.py``, and ``questions.py`` exactly
    when the entry says it asks) and its entry (``listed``); and scripts no entry names."""
    found, named = [], set()
    for page in listed:
        named.add(page.path)
        room = root / "specdec_ui" / page.room
        if not (root / page.path).is_file():
            found.append(f"{page.title}: no script {page.path}")
        address_file = root / "pages" / f"{page.url_path}.py"
        if not page.is_home and "run_app()" not in _text(address_file):
            found.append(
                f"{page.title}: no address file pages/{page.url_path}.py running the router"
            )
        if not (room / "__init__.py").is_file():
            found.append(f"{page.title}: no room specdec_ui/{page.room}/ (with an __init__.py)")
        if page.asks != (room / "questions.py").is_file():
            have = "has no" if page.asks else "has a"
            found.append(
                f"{page.title}: asks={page.asks} but specdec_ui/{page.room}/ {have} questions.py"
            )
    for script in sorted((root / "pages" / "scripts").glob("*.py")):
        if f"pages/scripts/{script.name}" not in named:
            found.append(f"pages/scripts/{script.name}: no PageInfo in specdec_ui/registry.py")
    return found


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""
