"""Who may import whom ("The house" in docs/ARCHITECTURE.md), read from the source with ast.

- ``specdec_core``: numpy and scipy; never ``specdec_ui``, Streamlit or plotly;
- ``specdec_ui.runtime``: no Streamlit, no kit, no page room (and importing it loads
  neither Streamlit nor plotly);
- ``specdec_ui.kit`` and the app-wide modules at the top of ``specdec_ui``: no page room;
- a page room (``specdec_ui.<room>``, named after ``pages/scripts/<room>.py``): the kit, the
  runtime, the top, the core and itself; another room only where :data:`EXCEPTIONS` says why;
- ``pages/scripts/<room>.py``: its own room and the floors, no other room; the address files
  ``pages/*.py`` and ``app.py``: the router only.

Imports inside functions count as much as those at the top of a file.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UI = "specdec_ui"
FLOORS = ("kit", "runtime")
MAX_TOP_LEVEL = 20  # modules at the top of specdec_ui, __init__ included

# (importer, imported) -> why a page room imports another one. Keep it short: a pair that
# grows is a module that wants to move to the kit, the runtime or the top.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("specdec_ui.variants.view", "specdec_ui.losslessness.verdict"): (
        "one verdict section for both labs (issue 26 item 2): the Variants lab says its "
        "verdict, CSV and p-value text with the Losslessness lab's"
    ),
    ("specdec_ui.variants.view", "specdec_ui.losslessness.figures"): (
        "the Variants lab draws its token histogram and tokens-per-round chart with the "
        "Losslessness lab's builders"
    ),
    ("specdec_ui.serving.view", "specdec_ui.model_pairs.work"): (
        "the Serving lab puts this server's measured costs, the Model pair lab's cost "
        "profile, beside its model"
    ),
    ("specdec_ui.serving.figures", "specdec_ui.speedup.figures"): (
        "the Serving lab's charts use the Speedup explorer's K colours and reference line"
    ),
    ("specdec_ui.home.view", "specdec_ui.speedup.figures"): (
        "the Home page shows the Speedup explorer's timeline"
    ),
    ("specdec_ui.losslessness.view", "specdec_ui.classroom.pool_panel"): (
        "a phone in a class adds its rounds to the class's pool from the lab (issue 34 item 3)"
    ),
    ("specdec_ui.round.view", "specdec_ui.classroom.pool_panel"): (
        "a phone in a class adds its rounds to the class's pool from the Round page (issue 34)"
    ),
}


def module_name(root: Path, path: Path) -> str:
    """'specdec_ui/kit/text.py' -> 'specdec_ui.kit.text' (a package's __init__ -> the package)."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(root: Path, dotted: str) -> bool:
    base = root.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports_of(root: Path, path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import of a file; ``from pkg import mod`` names ``pkg.mod``."""
    mine = module_name(root, path)
    package = mine if path.name == "__init__.py" else mine.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((node.lineno, full if is_module(root, full) else base))
    return found


def rooms(root: Path) -> set[str]:
    """The page rooms: subpackages of specdec_ui other than the kit and the runtime."""
    return {
        d.name
        for d in (root / UI).iterdir()
        if (d / "__init__.py").is_file() and d.name not in FLOORS
    }


def place(root: Path, dotted: str) -> str:
    """Where a module lives: 'core', 'kit', 'runtime', 'top', 'room:<name>', or its top name."""
    parts = dotted.split(".")
    if parts[0] == "specdec_core":
        return "core"
    if parts[0] != UI:
        return parts[0]
    if len(parts) > 1 and parts[1] in FLOORS:
        return parts[1]
    if len(parts) > 1 and parts[1] in rooms(root):
        return f"room:{parts[1]}"
    return "top"


def refusal(root: Path, importer: str, imported: str) -> str | None:
    """Why ``importer`` may not import ``imported`` (None: it may)."""
    mine, theirs = place(root, importer), place(root, imported)
    room = theirs.startswith("room:")
    if mine == "core" and (room or theirs in ("top", "kit", "runtime", "streamlit", "plotly")):
        return "the core imports numpy and scipy only"
    if mine == "runtime" and (room or theirs in ("streamlit", "kit")):
        return "the runtime imports no Streamlit, no kit and no page room"
    if mine in ("kit", "top") and room:
        return "the kit and the top never import a page room"
    if mine.startswith("room:") and room and mine != theirs:
        if (importer, imported) not in EXCEPTIONS:
            return "a page room imports another one only where EXCEPTIONS says why"
    return None


def source_files(root: Path, folder: str) -> list[Path]:
    return sorted(p for p in (root / folder).rglob("*.py") if "__pycache__" not in p.parts)


def wrong_way_imports(root: Path) -> list[str]:
    """'path:line importer -> imported: why' for every import against the house's directions."""
    found = []
    for path in source_files(root, "specdec_core") + source_files(root, UI):
        importer = module_name(root, path)
        for line, imported in imports_of(root, path):
            why = refusal(root, importer, imported)
            if why:
                found.append(f"{path.relative_to(root)}:{line} {importer} -> {imported}: {why}")
    return found


def page_script_problems(root: Path) -> list[str]:
    """Each page script imports its own room and no other; the address files and app.py
    import the router only."""
    found = []
    for path in sorted((root / "pages" / "scripts").glob("*.py")):
        places = {place(root, m) for _, m in imports_of(root, path) if m.startswith(UI)}
        own, rel = f"room:{path.stem}", path.relative_to(root)
        if own not in places:
            found.append(f"{rel}: does not import specdec_ui.{path.stem}")
        others = sorted(p for p in places if p.startswith("room:") and p != own)
        found += [f"{rel}: imports {p}" for p in others]
    for path in [root / "app.py", *sorted((root / "pages").glob("*.py"))]:
        ui = {m for _, m in imports_of(root, path) if m.startswith(UI)}
        if ui - {f"{UI}.router"}:
            found.append(f"{path.relative_to(root)}: imports {sorted(ui)}, not the router only")
    return found


def test_the_ui_is_in_rooms_one_per_page_script():
    ui = ROOT / UI
    assert all((ui / floor / "__init__.py").is_file() for floor in FLOORS), (
        "specdec_ui has lost a floor: kit/ and runtime/ each need an __init__.py"
    )
    top = sorted(p.name for p in ui.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL, f"{len(top)} modules at the top of specdec_ui: {top}"
    scripts = {p.stem for p in (ROOT / "pages" / "scripts").glob("*.py")}
    assert rooms(ROOT) == scripts, "one room per page script, named after it"


def test_every_import_goes_the_houses_way():
    assert wrong_way_imports(ROOT) == []


def test_page_scripts_import_their_own_room_and_addresses_the_router():
    assert page_script_problems(ROOT) == []


def test_every_exception_is_still_needed_and_says_why():
    """A pair whose two modules exist is imported (a pair naming a module that a branch
    not merged yet adds is left alone)."""
    used = set()
    for path in source_files(ROOT, UI):
        importer = module_name(ROOT, path)
        used |= {(importer, m) for _, m in imports_of(ROOT, path) if (importer, m) in EXCEPTIONS}
    present = {pair for pair in EXCEPTIONS if all(is_module(ROOT, m) for m in pair)}
    assert present - used == set(), "no longer imported: remove from EXCEPTIONS"
    assert all(len(why) > 20 for why in EXCEPTIONS.values())


def test_importing_the_runtime_loads_no_streamlit_or_plotly():
    modules = [module_name(ROOT, p) for p in source_files(ROOT, f"{UI}/runtime")]
    code = (
        f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
        "print(sorted({'streamlit', 'plotly'} & {n.split('.')[0] for n in sys.modules}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_architecture_doc_pictures_every_shared_room_and_no_stale_one():
    """Every floor and every room that is not one page's room has a row in the house; a
    page's room may have one (its ``__init__`` docstring and the registry describe it, so a
    new page needs no row here); every room the house names exists."""
    from specdec_ui.registry import PAGES

    architecture = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    house = architecture.split("## The house", 1)[1].split("\n## ", 1)[0]
    page_rooms = {info.room for info in PAGES}
    for room in (*FLOORS, *sorted(set(rooms(ROOT)) - page_rooms)):
        assert f"`{room}/`" in house, f"docs/ARCHITECTURE.md's house has no row for {room}/"
    for named in re.findall(r"`(\w+)/`", house):
        assert (ROOT / "specdec_ui" / named).is_dir() or (ROOT / named).is_dir(), (
            f"docs/ARCHITECTURE.md's house names {named}/, which is no folder of the project"
        )


# --- the checker finds what it is looking for --------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


@pytest.fixture
def house(tmp_path):
    """A tiny house that keeps every rule: two rooms, the floors, the core."""
    return _tree(
        tmp_path,
        {
            "specdec_core/__init__.py": "import numpy\n",
            "specdec_ui/__init__.py": "",
            "specdec_ui/presets.py": "",
            "specdec_ui/kit/__init__.py": "",
            "specdec_ui/kit/widgets.py": "import streamlit\nfrom specdec_ui.runtime import store\n",
            "specdec_ui/runtime/__init__.py": "",
            "specdec_ui/runtime/store.py": "import specdec_core\n",
            "specdec_ui/round/__init__.py": "",
            "specdec_ui/round/view.py": "from specdec_ui.kit import widgets\nfrom . import codec\n",
            "specdec_ui/round/codec.py": "from specdec_ui import presets\n",
            "specdec_ui/lab/__init__.py": "",
            "specdec_ui/lab/view.py": "from ..kit.widgets import x\n",
            "pages/lab.py": "from specdec_ui.router import run_app\n",
            "pages/scripts/round.py": "from specdec_ui.round import view\n",
            "pages/scripts/lab.py": "from specdec_ui.lab import view\n",
            "app.py": "from specdec_ui.router import run_app\n",
        },
    )


def test_the_checker_passes_a_house_that_keeps_the_rules(house):
    assert wrong_way_imports(house) == [] and page_script_problems(house) == []


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("specdec_core/bad.py", "import streamlit\n", "the core imports numpy and scipy only"),
        ("specdec_core/bad.py", "from specdec_ui import presets\n", "the core imports numpy"),
        ("specdec_ui/runtime/bad.py", "import streamlit.runtime\n", "the runtime imports no"),
        ("specdec_ui/runtime/bad.py", "from ..kit import widgets\n", "the runtime imports no"),
        ("specdec_ui/kit/bad.py", "from specdec_ui.round import view\n", "the kit and the top"),
        ("specdec_ui/bad.py", "def f():\n    from .lab import view\n", "the kit and the top"),
        ("specdec_ui/lab/bad.py", "from specdec_ui.round.codec import x\n", "a page room"),
    ],
)
def test_the_checker_finds_a_wrong_way_import(house, name, text, why):
    _tree(house, {name: text})
    found = wrong_way_imports(house)
    assert len(found) == 1 and found[0].startswith(name) and why in found[0]


def test_the_checker_finds_a_page_script_in_the_wrong_room(house):
    _tree(house, {"pages/scripts/lab.py": "from specdec_ui.round import view\n"})
    _tree(house, {"pages/other.py": "from specdec_ui.kit import widgets\n"})
    assert page_script_problems(house) == [
        "pages/scripts/lab.py: does not import specdec_ui.lab",
        "pages/scripts/lab.py: imports room:round",
        "pages/other.py: imports ['specdec_ui.kit.widgets'], not the router only",
    ]
