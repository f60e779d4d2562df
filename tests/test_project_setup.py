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


def test_ci_runs_the_readme_test_command_verbatim():
    test_command = readme_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert (
        test_command
        in ci.splitlines()[
            ci.splitlines().index(
                "# Keep this line identical to the test command in README.md (a test checks it)."
            )
            + 1
        ]
    )
    assert "apt-get install" in ci and "chromium" in ci
    assert '"$rc" -eq 5' in ci  # pytest's "no tests collected" is a failure


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


def test_runtime_requirements_are_pinned_to_compatible_ranges():
    lines = [
        line
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    names = {re.split(r"[<>=]", line)[0] for line in lines}
    assert names == {"streamlit", "numpy", "scipy", "plotly", "pandas", "segno"}
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
