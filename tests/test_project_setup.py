"""The README's two set-up commands stay true, and CI runs exactly the test one."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", setup)


def test_readme_has_the_two_commands():
    run_app, run_tests = readme_commands()[:2]
    assert run_app == "pip install -r requirements.txt && streamlit run app.py"
    assert "requirements-dev.txt" in run_tests and "pytest" in run_tests


def _ci_lines() -> list[str]:
    return (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_ci_runs_the_readme_test_command_verbatim():
    test_command = readme_commands()[1]
    lines = _ci_lines()
    marker = "# Keep this line identical to the test command in README.md (a test checks it)."
    assert lines[lines.index(marker) + 1] == test_command
    ci = "\n".join(lines)
    assert "apt-get install" in ci and "chromium" in ci and "redis-server" in ci
    assert "fail_on_no_tests $?" in lines[-1]  # the full run's exit code, 5 included
    assert '"$1" -eq 5' in ci  # pytest's "no tests collected" is a failure


def _fast_tier(lines: list[str]) -> tuple[int, list[str], str]:
    """(line number, test paths, pytest line) of the fast tier's pytest command."""
    (at,) = [i for i, line in enumerate(lines) if line.startswith("FAST_TESTS=(")]
    paths = lines[at].split("(", 1)[1].split(")", 1)[0].split()
    (run,) = [i for i, line in enumerate(lines) if '"${FAST_TESTS[@]}"' in line]
    return run, paths, lines[run]


def test_ci_runs_a_fast_tier_first_that_stops_ci_on_failure():
    lines = _ci_lines()
    run, paths, command = _fast_tier(lines)
    first = {
        name: min(i for i, line in enumerate(lines) if needle in line and not line.startswith("#"))
        for name, needle in {
            "apt-get": "apt-get install",
            "train": "requirements-train.txt",
            "optional": "export SPECDEC_REQUIRE_OPTIONAL=1",
            "readme": readme_commands()[1],
        }.items()
    }
    assert all(run < i for i in first.values()), first  # before any install or the full run
    assert command.startswith("ruff check . && ruff format --check . && python3 -m pytest")
    assert "fast tier failed" in lines[run + 1] and "exit 1" in lines[run + 1]
    # Its selection: no browser, no nginx (by path and by marker); every other test folder.
    assert '-m "not e2e"' in command
    assert sorted(paths) == ["tests/app", "tests/core", "tests/test_*.py", "tests/ui"]
    folders = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders - {"e2e", "scale"} == {p.split("/")[1] for p in paths if "*" not in p}
    # The optional-package test may skip in the fast tier: nothing requires it there.
    assert (
        lines.index("unset SPECDEC_REQUIRE_E2E SPECDEC_REQUIRE_NGINX SPECDEC_REQUIRE_OPTIONAL")
        < run
    )


def test_lint_includes_the_numpy_random_rule():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "NPY" in config["tool"]["ruff"]["lint"]["select"]
    assert "ruff check ." in readme_commands()[1]


def test_the_test_command_checks_formatting_and_function_size():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    lint = config["tool"]["ruff"]["lint"]
    assert {"C901", "PLR0912", "PLR0913", "PLR0915"} <= set(lint["select"])
    assert lint["mccabe"]["max-complexity"] <= 12
    assert lint["pylint"]["max-args"] <= 10  # keyword-only options count too
    assert "ruff format --check ." in readme_commands()[1]


def test_contributing_states_the_limits_pyproject_enforces():
    """CONTRIBUTING's style guards say the numbers ruff reads from pyproject.toml."""
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]
    lint = lint["lint"]
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    guards = " ".join(text.split("## Style guards", 1)[1].split("\n## ", 1)[0].split())
    limits = {
        "C901 (complexity": lint["mccabe"]["max-complexity"],
        "PLR0912 (": lint["pylint"]["max-branches"],
        "PLR0913 (": lint["pylint"]["max-args"],
        "PLR0915 (": lint["pylint"]["max-statements"],
    }
    for rule, limit in limits.items():
        found = re.search(re.escape(rule) + r"[^)]*?≤ (\d+)", guards)
        assert found is not None, f"CONTRIBUTING does not state the limit of {rule}"
        assert int(found.group(1)) == limit, f"{rule}: CONTRIBUTING says {found.group(1)}"


def test_runtime_requirements_are_pinned_to_compatible_ranges():
    lines = [
        line
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    names = {re.split(r"[<>=]", line)[0] for line in lines}
    assert names == {"streamlit", "numpy", "scipy", "plotly", "pandas", "segno", "redis"}
    assert all(">=" in line and "<" in line for line in lines)


def test_streamlit_config_is_private_and_safe():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["browser"]["gatherUsageStats"] is False
    assert config["server"]["enableXsrfProtection"] is True
    assert config["server"]["headless"] is True


def test_core_never_imports_the_ui():
    for path in (ROOT / "specdec_core").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+(streamlit|plotly)", source, re.M), path
        assert not re.search(r"^\s*assert\s", source, re.M), f"{path}: use ValueError, not assert"


# --- the documents: every relative link lands, and the README leads to every document -----

LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")


def _documents() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def _relative_links(path: Path) -> list[str]:
    """The local targets of a document's markdown links, without their #anchors."""
    targets = (t.split("#", 1)[0] for t in LINK.findall(path.read_text(encoding="utf-8")))
    return [t for t in targets if t and not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def _broken_links(docs: list[Path], root: Path) -> list[str]:
    broken = []
    for doc in docs:
        for target in _relative_links(doc):
            path = (doc.parent / target).resolve()
            if not path.exists():
                broken.append(f"{doc.relative_to(root)}: {target}")
    return broken


def test_every_relative_link_in_the_documents_points_to_a_file():
    assert _broken_links(_documents(), ROOT) == []


def test_the_link_checker_finds_a_broken_link(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "here.md").write_text("# here")
    doc = tmp_path / "docs" / "doc.md"
    doc.write_text(
        "[a](../here.md) [b](https://example.org/x) [c](#top) [d](../gone.md#part) [e](here.md)"
    )
    assert _relative_links(doc) == ["../here.md", "../gone.md", "here.md"]
    assert _broken_links([doc], tmp_path.resolve()) == [
        "docs/doc.md: ../gone.md",
        "docs/doc.md: here.md",
    ]


def test_the_readme_links_every_document():
    linked = {(ROOT / t).resolve() for t in _relative_links(ROOT / "README.md")}
    for doc in [ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")]:
        assert doc.resolve() in linked, f"README.md has no link to {doc.relative_to(ROOT)}"


def test_the_readme_stays_one_page():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 150


def test_the_pages_in_detail_name_registered_pages_only():
    from specdec_ui.registry import PAGES

    text = (ROOT / "docs" / "PAGES.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \*\*(.+?)\*\*", text, re.M)
    titles = [page.title for page in PAGES]
    assert rows and set(rows) <= set(titles), set(rows) - set(titles)
    assert rows == [t for t in titles if t in rows], "rows in the registry's order"


def test_the_suite_runs_in_one_worker_per_core(monkeypatch):
    """The README's command runs pytest-xdist (on 2 cores a newcomer waits about half as
    long): pyproject's addopts asks for it, requirements-dev installs it, ``-n auto`` is
    capped, and each worker's server writes its own log."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    addopts = config["tool"]["pytest"]["ini_options"]["addopts"].split()
    assert "-n" in addopts and addopts[addopts.index("-n") + 1] == "auto"
    assert "--dist" in addopts and addopts[addopts.index("--dist") + 1] == "loadgroup"
    dev = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8").splitlines()
    assert any(re.fullmatch(r"pytest-xdist>=[\d.]+,<[\d.]+", line) for line in dev)

    import tests.conftest as suite
    from tests.e2e.conftest import worker_file

    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    assert 1 <= suite.pytest_xdist_auto_num_workers(None) <= suite.MAX_WORKERS
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert suite.pytest_xdist_auto_num_workers(None) is None  # xdist reads the variable
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert worker_file("e2e-server.log") == "e2e-server-gw1.log"
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert worker_file("e2e-server.log") == "e2e-server.log"
