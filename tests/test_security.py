"""The app is public: static checks of the code and config, and a hostile label in AppTest.

- No code path can render HTML: no ``unsafe_allow_html=True``, no ``st.html``, no
  custom components (the AST of every app file is inspected, so comments and
  strings do not count and method calls such as ``model.eval()`` are not confused
  with the builtin).
- No ``eval``/``exec``/``compile`` builtins, no pickle-like loaders, no
  ``allow_pickle=True``.
- ``.streamlit/config.toml`` keeps XSRF protection on, uploads tiny and error
  details off.
- A ``<script>`` / ``<img onerror>`` label typed into the round page's vocabulary
  field comes out escaped everywhere it is shown (markdown, captions, plotly),
  and never reaches LaTeX.
"""

from __future__ import annotations

import ast
import json
import tomllib
from pathlib import Path

import pytest

from tests.app.conftest import open_page

ROOT = Path(__file__).resolve().parents[1]
APP_DIRS = ("pages", "specdec_core", "specdec_ui", "tools")
DANGEROUS_BUILTINS = {"eval", "exec", "compile", "__import__"}
DANGEROUS_MODULES = {"pickle", "cPickle", "dill", "marshal", "shelve", "joblib", "cloudpickle"}
HTML_CALLS = {"html"}  # st.html / st.components.v1.html
# The exceptions: presenter view's static CSS and key script, the live region's script and
# the Serving lab's scroll script, module string literals passed by name to st.html (checked
# by _is_static_html; nothing formatted at run time).
STATIC_HTML_FILES = {
    "specdec_ui/kit/presenter.py",
    "specdec_ui/kit/announce.py",  # the one polite live region of every page
    "specdec_ui/serving/cases.py",  # the phone's scroll to the chart a case changed
}
STATIC_HTML_KEYWORDS = {"unsafe_allow_javascript", "width"}


def app_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for folder in APP_DIRS:
        files += sorted((ROOT / folder).rglob("*.py"))
    return [f for f in files if f.is_file()]


def _single_str_constants(tree: ast.Module) -> set[str]:
    """Names bound exactly once in the file, at module level, to a plain string literal."""
    bound: dict[str, int] = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bound[name.id] = bound.get(name.id, 0) + 1
    return {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name) and bound.get(target.id) == 1
    }


def _is_static_html(node: ast.Call, constants: set[str]) -> bool:
    """``st.html(NAME)`` where NAME is a module string literal: no run-time text at all."""
    return (
        len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in constants
        and all(kw.arg in STATIC_HTML_KEYWORDS for kw in node.keywords)
    )


def _call_findings(node: ast.Call, constants: set[str]) -> list[str]:
    """What is dangerous in one call: eval/exec, html of run-time text, pickle, unsafe flags."""
    func, out = node.func, []
    if isinstance(func, ast.Name) and func.id in DANGEROUS_BUILTINS:
        out.append(f"builtin {func.id}()")
    if _is_static_html(node, constants):  # a module string literal, its allowed keywords
        return out
    if isinstance(func, ast.Attribute):
        base = ast.unparse(func.value)
        if func.attr in HTML_CALLS and (
            base.split(".")[0] in {"st", "streamlit", "components"} or "components" in base
        ):
            out.append(f"{base}.html()")
        if func.attr in {"load", "loads"} and base.split(".")[0] in DANGEROUS_MODULES:
            out.append(f"{base}.{func.attr}()")
    for kw in node.keywords:
        truthy = not (isinstance(kw.value, ast.Constant) and not kw.value.value)
        if kw.arg in {"unsafe_allow_html", "allow_pickle", "unsafe_allow_javascript"} and truthy:
            out.append(f"{kw.arg}={ast.unparse(kw.value)}")
    return out


def _bad_imports(node: ast.Import | ast.ImportFrom) -> list[str]:
    """Imported names of dangerous modules (pickle, marshal, ...) or of Streamlit components."""
    names = [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        names.append(node.module)
    return [
        name
        for name in names
        if name.split(".")[0] in DANGEROUS_MODULES or "components" in name.split(".")
    ]


def findings(path: Path, *, static_html_ok: bool | None = None) -> list[str]:
    """Dangerous constructs in one file, as 'file:line: what'.

    ``static_html_ok`` (default: the file is in ``STATIC_HTML_FILES``) lets ``st.html``
    render a module-level string literal, e.g. presenter view's CSS and key script.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    if static_html_ok is None:
        static_html_ok = str(where) in STATIC_HTML_FILES
    constants = _single_str_constants(tree) if static_html_ok else set()
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            out += [f"{where}:{node.lineno}: {what}" for what in _call_findings(node, constants)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out += [f"{where}:{node.lineno}: import {name}" for name in _bad_imports(node)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if ":material/" in node.value:
                out.append(f"{where}:{node.lineno}: material icon (fetches a font from a CDN)")
    return out


def test_the_checker_finds_what_it_is_looking_for(tmp_path):
    # Proof that the scan below can fail: a file with every forbidden construct.
    bad = tmp_path / "probe.py"
    source = (
        "import pickle\nimport streamlit as st\nimport streamlit.components.v1 as components\n"
        "st.markdown(x, unsafe_allow_html=True)\nst.html(x)\ncomponents.html(x)\n"
        "eval(x)\nexec(x)\npickle.loads(x)\nnp.load(f, allow_pickle=True)\n"
        "st.set_page_config(page_icon=':material/home:')\n"
        "model.eval()\nst.markdown(x, unsafe_allow_html=False)\n"
    )
    bad.write_text(source, encoding="utf-8")
    found = findings(bad)
    text = "\n".join(found)
    for what in (
        "import pickle",
        "unsafe_allow_html=True",
        "st.html()",
        "components.html()",
        "builtin eval()",
        "builtin exec()",
        "pickle.loads()",
        "allow_pickle=True",
        "material icon",
        "streamlit.components.v1",
    ):
        assert what in text, what
    assert len(found) == 10, found  # model.eval() and unsafe_allow_html=False are fine


def test_static_html_is_only_a_module_literal_in_an_allowed_file(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        'CSS = "<style>p {}</style>"\nJS = "<script></script>"\nTWICE = "<b></b>"\n'
        "TWICE = user_text\nst.html(CSS)\nst.sidebar.html(JS, unsafe_allow_javascript=True)\n"
        "st.html(CSS + user_text)\nst.html(f'{CSS}')\nst.html(TWICE)\n"
        "st.html(user_text, unsafe_allow_javascript=True)\n",
        encoding="utf-8",
    )
    allowed = findings(probe, static_html_ok=True)
    lines = sorted(int(f.split(":")[1]) for f in allowed)
    # Lines 7-10: a concatenation, an f-string, a name bound twice, user text with scripts.
    assert lines == [7, 8, 9, 10, 10], allowed
    # Outside the allowed files even the literals are findings.
    assert len(findings(probe, static_html_ok=False)) == 8


def test_app_code_has_no_html_injection_eval_or_pickle():
    files = app_files()
    assert len(files) >= 10, "expected app.py, the pages and the two packages"
    problems = [f for path in files for f in findings(path)]
    assert not problems, "\n".join(problems)


def test_pages_exist_and_are_scanned():
    pages = sorted((ROOT / "pages").rglob("*.py"))
    assert len(pages) >= 8
    assert set(pages) <= set(app_files())


def streamlit_internals(path: Path) -> list[str]:
    """Imports of Streamlit's modules other than ``streamlit`` itself (its public API)
    in one file: ``streamlit.runtime``, ``streamlit.web`` and the like change between
    releases without notice."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "streamlit":  # from streamlit import runtime: a module too
                names = [f"streamlit.{a.name}" for a in node.names if _is_module(a.name)]
        found += [f"{path.name}:{node.lineno} imports {n}" for n in names if "streamlit." in n]
    return found


def _is_module(name: str) -> bool:
    """Whether ``streamlit.<name>`` is a module (not a function such as ``st.write``)."""
    import importlib.util

    return importlib.util.find_spec(f"streamlit.{name}") is not None


def test_app_code_uses_only_streamlits_public_api(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import streamlit as st\nfrom streamlit.runtime import pages_manager\n"
        "from streamlit import runtime, write\n"
    )
    assert streamlit_internals(probe) == [
        "probe.py:2 imports streamlit.runtime",
        "probe.py:3 imports streamlit.runtime",
    ]
    problems = [f for path in app_files() for f in streamlit_internals(path)]
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def config() -> dict:
    with open(ROOT / ".streamlit" / "config.toml", "rb") as fh:
        return tomllib.load(fh)


def test_config_keeps_xsrf_protection_on(config):
    assert config["server"]["enableXsrfProtection"] is True
    # XSRF protection is only off when CORS is off too; keep CORS at its default (on).
    assert config["server"].get("enableCORS", True) is True


def test_config_allows_only_tiny_uploads(config):
    assert 0 < config["server"]["maxUploadSize"] <= 1  # MB; the app takes no uploads


def test_config_hides_error_details(config):
    assert config["client"]["showErrorDetails"] in ("none", False, "false")


def test_config_sends_no_usage_statistics(config):
    assert config["browser"]["gatherUsageStats"] is False


# --- a hostile label in the vocabulary field (AppTest) -------------------------------

SCRIPT = "<script>x()</script>"  # labels are at most 24 characters
IMG = "<img src=x onerror=f()>"
HOSTILE_LINK = {
    "mode": "custom",
    "labels": f"{SCRIPT}, {IMG}, C, D, E",
    "k": "3",
    "seed": "0",
    "p": "0.40, 0.25, 0.20, 0.10, 0.05",
    "q": "0.30, 0.30, 0.15, 0.15, 0.10",
}


def _texts(at, kind: str) -> list[str]:
    return [str(el.value) for el in at.get(kind)]


@pytest.mark.parametrize("step", ["0", "3", "8"])
def test_hostile_labels_render_as_text_on_the_round_page(step):
    at = open_page("pages/scripts/round.py", {**HOSTILE_LINK, "step": step})
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    # The labels were accepted as typed (otherwise this test would prove nothing).
    assert at.text_input(key="round_labels").value == HOSTILE_LINK["labels"]

    markdown_like = _texts(at, "markdown") + _texts(at, "caption") + _texts(at, "warning")
    shown = "\n".join(markdown_like)
    assert "\\<script\\>" in shown, "the label should be on screen, escaped"
    for raw in ("<script", "<img", "</script"):
        for body in markdown_like:
            assert raw not in body.replace("\\<", "&lt;"), body

    for body in _texts(at, "latex"):
        assert "script" not in body and "img" not in body and "onerror" not in body, body

    specs = [el.proto.spec for el in at.get("plotly_chart")]
    assert specs, "the round page draws charts"
    assert any("&lt;script&gt;" in s for s in specs), "the label should appear in a chart"
    for spec in specs:
        text = json.dumps(json.loads(spec), ensure_ascii=False)
        assert "<script" not in text and "<img" not in text


# --- hosting: the image and the hosted requirements --------------------------------


def test_dockerfile_runs_the_app_as_a_user_with_a_health_check():
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    assert lines[0] == "FROM python:3.11-slim"
    assert "pip install -r requirements.txt" in text
    assert "HEALTHCHECK" in text and "/_stcore/health" in text
    users = [ln for ln in lines if ln.startswith("USER ")]
    assert users and users[-1] not in ("USER root", "USER 0"), "the app must not run as root"
    cmd = [ln for ln in lines if ln.startswith("CMD")][-1]  # the last CMD is the one that runs
    assert '"streamlit", "run", "app.py"' in cmd
    assert "enableXsrfProtection=false" not in text and "showErrorDetails" not in cmd


def test_dockerignore_keeps_secrets_history_and_tests_out_of_the_image():
    ignored = {
        ln.strip()
        for ln in (ROOT / ".dockerignore").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    }
    assert {".git", "tests", "test-output", ".venv"} <= ignored
    assert not ignored & {
        "specdec_core",
        "specdec_ui",
        "pages",
        "app.py",
        ".streamlit",
        "requirements.txt",
    }, "the image needs these"


def test_hosted_requirements_are_lean():
    names = {
        ln.split(">")[0].split("=")[0].split("<")[0].strip().lower()
        for ln in (ROOT / "requirements.txt").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    }
    assert "streamlit" in names and "plotly" in names
    dev_tools = {
        "pytest",
        "hypothesis",
        "ruff",
        "playwright",
        "pytest-playwright",
        "websockets",
        "psutil",
        "torch",
        "jupyter",
        "pytest-timeout",
    }
    assert not names & dev_tools, f"test or training tools in the hosted app: {names & dev_tools}"
