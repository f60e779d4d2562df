"""tools/move_into_rooms.py on a tiny package in a temporary git repository: it moves,
rewrites imports and mentions, runs again without a change, and refuses what it must."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("move_into_rooms", ROOT / "tools/move_into_rooms.py")
mover = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = mover  # dataclasses look their module up there
SPEC.loader.exec_module(mover)

FILES = {
    "specdec_ui/__init__.py": '"""A stale docstring."""\n',
    "specdec_ui/presets.py": "N = 3\n",
    "specdec_ui/widgets.py": "def show(x):\n    return x\n",
    "specdec_ui/processes.py": (
        "from pathlib import Path\n\n"
        "ROOT = Path(__file__).resolve().parent.parent\n"
        'COMMAND = "python -m specdec_ui.helper"\n'
        'SCRIPT = "from specdec_ui import lab_work as lw; lw.run(1)"\n\n\n'
        "def run_apart(n):\n    return n\n"
    ),
    "specdec_ui/figures_lab.py": 'NAME = "lab"\n\n\ndef histogram(x):\n    return x\n',
    "specdec_ui/lab_work.py": (
        "from .processes import run_apart\n\n\ndef run(n):\n    return run_apart(n)\n"
    ),
    "specdec_ui/lab_view.py": (
        '"""The lab\'s sections; the work is in :mod:`lab_work` (specdec_ui/lab_work.py)."""\n\n'
        "from specdec_ui import presets\n\n"
        "from . import figures_lab as fl\n"
        "from . import lab_work\n"
        "from .widgets import show  # the kit's\n\n\n"
        "def draw():\n"
        "    show(fl.histogram(lab_work.run(presets.N)))\n"
        '    return f"{fl.NAME}"\n'
    ),
    "pages/scripts/losslessness.py": (
        "from specdec_ui import lab_view as view\nfrom specdec_ui.widgets import show\n\n"
        "show(view.draw())\n"
    ),
    "tests/test_lab.py": (
        "from specdec_ui import lab_view as view, lab_work\n\n\n"
        "def test_the_lab(monkeypatch):\n"
        '    monkeypatch.setattr("specdec_ui.lab_work.run", lambda n: n + 1)\n'
        '    assert view.draw() == "lab" and lab_work.run(2) == 3\n'
        '    assert view.fl.NAME == "lab"  # the view\'s own alias, seen from here\n'
    ),
    "README.md": (
        "The lab: `specdec_ui/lab_view.py`, with `lab_work.py` and `widgets.py`.\n"
        "`lab_work.run` runs; `theme.headingFontSizes` is Streamlit's.\n"
    ),
}


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path):
    """The tiny flat package, committed."""
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "flat")
    return tmp_path


def _snapshot(root: Path) -> dict[str, str]:
    paths = [p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in paths}


def test_it_moves_the_modules_into_their_rooms(repo):
    report = mover.move(repo, ruff=False)
    assert "specdec_ui/lab_view.py -> specdec_ui/losslessness/view.py" in report.moved
    assert "specdec_ui/widgets.py -> specdec_ui/kit/widgets.py" in report.moved
    for new in ("losslessness/view.py", "losslessness/work.py", "losslessness/figures.py"):
        assert (repo / "specdec_ui" / new).is_file()
    assert not (repo / "specdec_ui/lab_view.py").exists()
    assert (repo / "specdec_ui/presets.py").is_file()  # app-wide: stays at the top
    assert "skipped specdec_ui/lm_view.py: not in this tree" in report.notes
    assert "imports no Streamlit" in (repo / "specdec_ui/runtime/__init__.py").read_text()
    assert "in rooms" in (repo / "specdec_ui/__init__.py").read_text()
    assert "specdec_ui/losslessness/view.py" in _git(repo, "status", "--short")


def test_it_rewrites_imports_aliases_and_mentions(repo):
    mover.move(repo, ruff=False)
    view = (repo / "specdec_ui/losslessness/view.py").read_text()
    assert "from specdec_ui.losslessness import figures\n" in view  # fl: its name in its room
    assert "from specdec_ui.losslessness import work\n" in view
    assert "from specdec_ui.kit.widgets import show  # the kit's\n" in view
    assert "show(figures.histogram(work.run(presets.N)))" in view
    assert 'f"{figures.NAME}"' in view
    assert ":mod:`specdec_ui.losslessness.work` (specdec_ui/losslessness/work.py)" in view
    processes = (repo / "specdec_ui/runtime/processes.py").read_text()
    assert "Path(__file__).resolve().parents[2]" in processes
    assert "python -m specdec_ui.runtime.helper" in processes
    assert '"from specdec_ui.losslessness import work as lw; lw.run(1)"' in processes
    test = (repo / "tests/test_lab.py").read_text()
    assert "import view as losslessness_view, work as losslessness_work" in test  # elsewhere
    assert '"specdec_ui.losslessness.work.run"' in test
    assert "losslessness_view.figures.NAME" in test
    assert (repo / "README.md").read_text() == (
        "The lab: `specdec_ui/losslessness/view.py`, with `losslessness/work.py` and "
        "`kit/widgets.py`.\n"
        "`losslessness.work.run` runs; `theme.headingFontSizes` is Streamlit's.\n"
    )


def test_the_moved_package_runs_and_its_test_passes(repo):
    mover.move(repo, ruff=False)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_lab.py"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_running_it_again_changes_nothing(repo):
    mover.move(repo, ruff=False)
    before = _snapshot(repo)
    again = mover.move(repo, ruff=False)
    assert again.moved == [] and again.rewritten == []
    assert _snapshot(repo) == before


def test_a_dry_run_changes_nothing(repo):
    before = _snapshot(repo)
    report = mover.move(repo, dry_run=True)
    assert report.moved and _snapshot(repo) == before


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("specdec_ui/brand_new.py", "X = 1\n", "not in MAPPING (tools/move_into_rooms.py): brand"),
        ("specdec_ui/verdict/__init__.py", "", "not in MAPPING (tools/move_into_rooms.py): ver"),
        ("specdec_ui/text.py", "<<<<<<< HEAD\nA = 1\n=======\n>>>>>>> b\n", "conflict markers"),
    ],
)
def test_it_refuses_an_unmapped_module_or_a_conflict_and_changes_nothing(repo, name, text, message):
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "add", ".")
    before = _snapshot(repo)
    with pytest.raises(mover.MoveError, match=message.replace("(", r"\(").replace(")", r"\)")):
        mover.move(repo, ruff=False)
    assert _snapshot(repo) == before


def test_it_refuses_a_top_level_over_the_limit(repo, monkeypatch):
    monkeypatch.setattr(mover, "MAX_TOP_LEVEL", 1)  # __init__ and presets stay at the top
    with pytest.raises(mover.MoveError, match="2 modules would stay at the top"):
        mover.move(repo, ruff=False)


def test_a_module_both_flat_and_moved_is_refused(repo):
    mover.move(repo, ruff=False)
    (repo / "specdec_ui/widgets.py").write_text("def show(x):\n    return x\n")
    with pytest.raises(mover.MoveError, match="both specdec_ui/widgets.py and"):
        mover.move(repo, ruff=False)


def test_the_real_mapping_leaves_at_most_20_modules_at_the_top():
    staying = [old for old, new in mover.MAPPING.items() if "." not in new]
    assert len(staying) + 1 <= mover.MAX_TOP_LEVEL == 20
    rooms = {new.split(".")[0] for new in mover.MAPPING.values() if "." in new}
    assert rooms == mover.room_names()
    scripts = {p.stem for p in (ROOT / "pages" / "scripts").glob("*.py")}
    assert set(mover.PAGE_ROOMS) == scripts
