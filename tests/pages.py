"""Every list of pages the tests walk, read from the registry (``specdec_ui.registry.PAGES``).

A page registered the documented way (CONTRIBUTING's "A new page") is in each list by
construction: the browser tests (accessibility, every page from the sidebar, phone screens,
presenter screens), the AppTest fuzz, the questions' checks and the README's table. What a
test expects of each page (its Tab stops, whether it draws charts at its defaults, the
parameters its link reads) stays in a table in that test, read through :func:`expected`,
which fails with what to add where a registered page has no row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypeVar

import pytest

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


def expected(table: Mapping[str, T], key: str, what: str) -> T:
    """``table[key]``, the expectation of page ``key`` (its address or script); a page
    missing from the table fails the test with the table's name and what to add."""
    if key not in table:
        pytest.fail(
            f"{key} is a registered page (specdec_ui/registry.py) but has no entry in {what}: "
            'add one for it (CONTRIBUTING\'s "A new page")',
            pytrace=False,
        )
    return table[key]


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
