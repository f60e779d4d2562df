"""Move the flat ``specdec_ui`` package into rooms (issue 26, item 3); safe to run again.

    python tools/move_into_rooms.py [--root PATH] [--dry-run] [--no-ruff]

The rooms: ``specdec_ui/kit/`` (what every page draws with), ``specdec_ui/runtime/`` (the
server's machinery, no Streamlit) and one subpackage per page, named after its script in
``pages/scripts/`` (its view, work and figures). A few app-wide modules stay at the top.

What it does, in order, and why it can run again on a tree that other branches changed:

1. refuses a tree with merge-conflict markers, a module of ``specdec_ui`` that :data:`MAPPING`
   does not name (a branch added it: say where it goes), or a top level over
   :data:`MAX_TOP_LEVEL` modules;
2. writes each room's ``__init__.py`` if it is missing, then ``git mv`` each old module to its
   room (a module already moved, or absent from this tree, is skipped with a note);
3. rewrites every import of a moved module in every tracked Python file (``import
   specdec_ui.x``, ``from specdec_ui import x [as y]``, ``from specdec_ui.x import ...`` and,
   inside ``specdec_ui``, relative imports, which all become absolute); an alias becomes the
   module's name in its room (``figures`` in the same room, ``losslessness_figures`` from
   elsewhere), and the file's uses of the old alias follow (``fl`` meant figures_lab in
   one view and figures_lm in another; :func:`choose_alias`);
4. keeps ``Path(__file__).resolve().parent.parent`` in a moved module naming the same
   folder (``.parents[2]``);
5. rewrites every mention in tracked text files: an import in a string (a script run in a
   subprocess: ``from specdec_ui import lm_work as lw``), dotted (``"specdec_ui.lm_work.X"`` in a
   monkeypatch, ``python -m specdec_ui.helper``), paths (``specdec_ui/lab_view.py``), bare
   file names (``lab_work.py`` -> ``losslessness/work.py``), ``:mod:`serving_log_view``` and
   a name in backticks (```lm_work.HOLD``` -> ```model_pairs.work.HOLD```);
   a Python line the rewrite made too long is split where it is prose (a comment, a
   docstring) or a string literal that opens its line (code is ruff format's);
6. runs ``ruff check --fix`` and ``ruff format`` (imports sorted), unless ``--no-ruff``.

Every step only acts on old names, so a second run finds nothing to do.
"""

from __future__ import annotations

import argparse
import ast
import functools
import io
import re
import shutil
import subprocess
import sys
import textwrap
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "specdec_ui"
MAX_TOP_LEVEL = 20  # modules at the top of specdec_ui, __init__ included

# Old module (directly under specdec_ui) -> its new module, relative to specdec_ui.
# A module that stays at the top maps to itself, so that an unnamed one stands out.
MAPPING: dict[str, str] = {
    # app-wide: the page registry and router, presets and limits, words, each page's questions
    "registry": "registry",
    "router": "router",
    "presets": "presets",
    "words": "words",
    "page_questions": "page_questions",
    # kit: what every page draws with
    "chart_text": "kit.chart_text",
    "engine_view": "kit.engine_view",
    "figures_engine": "kit.engine_figures",
    "page_frame": "kit.page_frame",
    "page_state": "kit.page_state",
    "presenter": "kit.presenter",
    "qr": "kit.qr",
    "share": "kit.share",
    "stepper": "kit.stepper",
    "text": "kit.text",
    "theme": "kit.theme",
    "token_text": "kit.token_text",
    "widgets": "kit.widgets",
    # runtime: the server's machinery, no Streamlit
    "figure_cache": "runtime.figure_cache",
    "helper": "runtime.helper",
    "processes": "runtime.processes",
    "render_gate": "runtime.render_gate",
    "result_store": "runtime.result_store",
    "shared_work": "runtime.shared_work",
    "work_queue": "runtime.work_queue",
    # one room per page script (pages/scripts/<room>.py)
    "home_view": "home.view",
    "round_view": "round.view",
    "round_state": "round.state",
    "round_codec": "round.codec",
    "round_story": "round.story",
    "figures_round": "round.figures",
    "speedup_view": "speedup.view",
    "figures_speedup": "speedup.figures",
    "lab_view": "losslessness.view",
    "lab_work": "losslessness.work",
    "figures_lab": "losslessness.figures",
    "verdict_view": "losslessness.verdict",  # branch rules (issue 26 item 2): both labs' verdict
    "self_test_view": "self_test.view",
    "teach_view": "teach.view",  # issue 34: a new room, no flat module ever moved into it
    "lm_view": "model_pairs.view",
    "lm_work": "model_pairs.work",
    "figures_lm": "model_pairs.figures",
    "variants_view": "variants.view",
    "variants_table": "variants.table",
    "figures_variants": "variants.figures",
    "serving_view": "serving.view",
    "serving_settings": "serving.settings",
    "serving_cases_view": "serving.cases",
    "serving_checks_view": "serving.checks",
    "serving_log_view": "serving.engine_log",
    "figures_serving": "serving.figures",
    # issue 34's Class page, born in its room: where a flat-layout branch's modules would go
    "classroom_view": "classroom.view",
    "classroom_asking": "classroom.asking",
    "figures_classroom": "classroom.figures",
}

ROOMS: dict[str, list[str]] = {
    "kit": [
        "The kit: what every page draws with (Streamlit and plotly allowed).",
        "Widgets, the page frame, the stepper, page state and share links, the presenter view "
        "and its QR code, the theme, safe text, coloured token text, charts' text alternatives "
        "and the engines' numbers panel.",
        "Imported by every page room and page script. Imports the runtime, the app-wide modules "
        "at the top of ``specdec_ui`` and the core; never a page room "
        "(tests/test_import_directions.py).",
    ],
    "runtime": [
        "The runtime: the server's machinery, shared by every session; imports no Streamlit.",
        "The result store (single flight, bounded), the FIFO work queue, the façade over both "
        "(``shared_work``), the figure cache, the render gate and the helper interpreters.",
        "Imported by the kit and the page rooms. Imports the core and the app-wide data at the "
        "top of ``specdec_ui``; never Streamlit, the kit nor a page room "
        "(tests/test_import_directions.py checks it, and that importing it loads no Streamlit).",
    ],
}
PAGE_ROOM_DOC = [
    "The {title} page's room: its sections (``view``){extra}; run by ``pages/scripts/{room}.py``.",
    "Imports the kit, the runtime, the app-wide modules at the top of ``specdec_ui`` and the "
    "core. Imported by its page script only; another room imports it only where "
    "tests/test_import_directions.py's EXCEPTIONS name the pair and say why.",
]
PAGE_ROOMS: dict[str, tuple[str, str]] = {
    "home": ("Home", ""),
    "round": ('"Step through a round"', ", its state, inputs codec, story and figures"),
    "speedup": ("Speedup explorer", " and its figures"),
    "losslessness": ("Losslessness lab", ", its Monte Carlo work and its figures"),
    "self_test": ("Self-test", ""),
    "model_pairs": ("Model pair lab", ", its shared work (runs, counts, speed) and its figures"),
    "variants": ("Variants lab", ", its table of variants and its figures"),
    "serving": ("Serving lab", ", its settings, cases, checks, engine-log decoder and figures"),
    "teach": ("Teach with it", ", its lesson path and printable worksheets"),
    "classroom": ("Class", ", its questions and experiments and its figures"),
}
PACKAGE_DOC = (
    'specdec_ui: the Streamlit side of the lab, in rooms (README\'s "The house").\n\n'
    "- ``kit/``: what every page draws with (widgets, page frame, stepper, theme, safe text,\n"
    "  presenter view, share links, charts' text alternatives);\n"
    "- ``runtime/``: the server's machinery (result store, work queue, figure cache, render\n"
    "  gate, helper interpreters), importing no Streamlit;\n"
    "- one room per page, named after its script in ``pages/scripts/`` (``home``, ``round``,\n"
    "  ``speedup``, ``losslessness``, ``self_test``, ``model_pairs``, ``variants``,\n"
    "  ``serving``): its ``view`` (sections), and its work and figures where it has them;\n"
    "- at the top, app-wide modules: ``registry`` and ``router`` (the pages), ``presets``\n"
    "  (every preset and page limit), ``words`` (display words of the core's names) and\n"
    "  ``page_questions`` (what each page asks its class).\n\n"
    "Figure builders are pure functions of core results returning plotly figures (no widgets,\n"
    "unit-tested without a browser). Who may import whom: tests/test_import_directions.py."
)
# Old names safe to read as this package's modules in prose (`presenter.chart`); names such as
# ``theme`` or ``text`` are not (`theme.headingFontSizes` is Streamlit's).
PROSE_NAMES = {"presenter", "widgets", "stepper", "processes"}
SKIPPED_FILES = {"tools/move_into_rooms.py", "tests/test_move_into_rooms.py"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".ini", ".yml", ".yaml", ".sh", ".js"}
TEXT_NAMES = {"Dockerfile", ".dockerignore"}
CONFLICT = re.compile(r"^(<<<<<<<|>>>>>>>) ", re.MULTILINE)


class MoveError(RuntimeError):
    """The tree is not one this script may move: the message says what to fix."""


@dataclass
class Report:
    """What a run did and noticed, printed at the end."""

    moved: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rewritten: list[str] = field(default_factory=list)


# --- the tree ---------------------------------------------------------------------------------


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` and return its output (raises on failure)."""
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise MoveError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def tracked_files(root: Path) -> list[str]:
    """Tracked files that exist in the work tree, as paths relative to ``root``."""
    return [p for p in git(root, "ls-files").splitlines() if (root / p).is_file()]


def is_text(path: str) -> bool:
    name = Path(path).name
    return Path(path).suffix in TEXT_SUFFIXES or name in TEXT_NAMES


def room_names() -> set[str]:
    """Every subpackage of specdec_ui this script knows: the kit, the runtime, the page rooms."""
    return set(ROOMS) | set(PAGE_ROOMS)


def check_conflicts(root: Path, files: list[str]) -> None:
    """Refuse a tree with merge-conflict markers (a half-merged file would be rewritten)."""
    hits = [p for p in files if is_text(p) and CONFLICT.search(read(root / p))]
    if hits:
        raise MoveError(f"merge-conflict markers in: {', '.join(hits)}; resolve them first")


def check_inventory(root: Path) -> None:
    """Refuse a module or subpackage of specdec_ui that MAPPING or the rooms do not name."""
    pkg = root / PACKAGE
    unknown = [
        p.name
        for p in sorted(pkg.glob("*.py"))
        if p.stem != "__init__" and p.stem not in MAPPING and p.stem not in MAPPING.values()
    ]
    unknown += [
        f"{d.name}/"
        for d in sorted(pkg.iterdir())
        if d.is_dir() and (d / "__init__.py").exists() and d.name not in room_names()
    ]
    if unknown:
        raise MoveError(
            f"not in MAPPING (tools/move_into_rooms.py): {', '.join(unknown)}; "
            "say which room each belongs to, then run again"
        )


def check_top_level(root: Path) -> None:
    """Refuse a move that would leave more than MAX_TOP_LEVEL modules at the top."""
    pkg = root / PACKAGE
    staying = [p.stem for p in pkg.glob("*.py") if "." not in MAPPING.get(p.stem, "")]
    if len(staying) > MAX_TOP_LEVEL:
        raise MoveError(
            f"{len(staying)} modules would stay at the top of {PACKAGE} (at most "
            f"{MAX_TOP_LEVEL}): {', '.join(sorted(staying))}; give some a room in MAPPING"
        )


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# --- moving files -----------------------------------------------------------------------------


def new_path(new_module: str) -> str:
    """'kit.widgets' -> 'specdec_ui/kit/widgets.py'."""
    return f"{PACKAGE}/{new_module.replace('.', '/')}.py"


def room_doc(room: str) -> str:
    """A room's docstring: what lives there and who may import it, wrapped at 92 columns."""
    if room in ROOMS:
        paragraphs = ROOMS[room]
    else:
        title, extra = PAGE_ROOMS[room]
        paragraphs = [p.format(title=title, extra=extra, room=room) for p in PAGE_ROOM_DOC]
    return "\n\n".join(textwrap.fill(p, width=92, break_on_hyphens=False) for p in paragraphs)


def write_room_inits(root: Path, report: Report) -> None:
    """Each room's ``__init__.py`` with its docstring, where it is missing."""
    for room in sorted(room_names()):
        init = root / PACKAGE / room / "__init__.py"
        if init.exists():
            continue
        report.notes.append(f"wrote {init.relative_to(root)}")
        init.parent.mkdir(parents=True, exist_ok=True)
        init.write_text(f'"""{room_doc(room)}\n"""\n', encoding="utf-8")
        git(root, "add", str(init.relative_to(root)))


def planned_moves(root: Path, report: Report) -> dict[str, str]:
    """Old path -> new path of every module of MAPPING still flat; notes the ones absent."""
    moves = {}
    for old, new in MAPPING.items():
        if old == new:
            continue
        src, dst = f"{PACKAGE}/{old}.py", new_path(new)
        if (root / src).exists() and (root / dst).exists():
            raise MoveError(f"both {src} and {dst} exist: merge them by hand, then run again")
        if (root / src).exists():
            moves[src] = dst
        elif not (root / dst).exists():
            report.notes.append(f"skipped {src}: not in this tree")
    return moves


def write_package_doc(root: Path) -> bool:
    """Give ``specdec_ui/__init__.py`` the rooms' docstring (the rest of the file is kept)."""
    init = root / PACKAGE / "__init__.py"
    source = read(init)
    tree = ast.parse(source)
    body = tree.body
    wanted = f'"""{PACKAGE_DOC}\n"""\n'
    has_doc = body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    lines = source.splitlines(keepends=True)
    rest = "".join(lines[body[0].end_lineno :]) if has_doc else source
    new = wanted + rest
    if new == source:
        return False
    init.write_text(new, encoding="utf-8")
    return True


# --- rewriting imports ------------------------------------------------------------------------


@dataclass(frozen=True)
class Where:
    """A file's place in the house: its package (for relative imports) and its page room."""

    path: str
    package: str | None
    room: str | None


def where(before: str, after: str) -> Where:
    """A file's package (from its path ``before`` the move: relative imports mean that one)
    and its page room (from its path ``after``: 'specdec_ui/round/view.py' or
    'pages/scripts/round.py' -> round)."""
    old, new = Path(before).with_suffix("").parts, Path(after).with_suffix("").parts
    package = ".".join(old[:-1]) if old[0] == PACKAGE else None
    room = None
    if new[0] == PACKAGE and len(new) > 2 and new[1] in PAGE_ROOMS:
        room = new[1]
    elif new[:2] == ("pages", "scripts") and len(new) == 3:
        room = new[2]
    return Where(after, package, room)


def moved(dotted: str) -> str:
    """The new name of a dotted module name: 'specdec_ui.lab_work.X' -> '...losslessness.work.X'."""
    parts = dotted.split(".")
    if parts[0] == PACKAGE and len(parts) > 1 and parts[1] in MAPPING:
        return ".".join([PACKAGE, *MAPPING[parts[1]].split("."), *parts[2:]])
    return dotted


def absolute(node: ast.ImportFrom, package: str | None) -> str | None:
    """The module an ImportFrom names, relative imports resolved (None: not resolvable here)."""
    if node.level == 0:
        return node.module
    if package is None:
        return None
    base = package.split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def choose_alias(target: str, here: Where, taken: dict[str, str], bound: str) -> str:
    """The name a moved module is bound to: its leaf in its own room (``figures``), else
    ``room_leaf`` (``losslessness_figures``), so that no alias means two modules.

    ``taken`` maps each name the file uses to the module bound to it ('' for other names)."""
    parts = target.split(".")
    leaf, room = parts[-1], (parts[1] if len(parts) == 3 else None)
    if room is None:
        candidates = [leaf]
    elif room in PAGE_ROOMS and room != here.room:
        candidates = [f"{room}_{leaf}"]
    else:
        candidates = [leaf, f"{room}_{leaf}"]
    for name in candidates:
        if name == bound or taken.get(name, target) == target:
            taken[name] = target
            return name
    raise MoveError(f"{here.path}: no free name for {target} (tried {candidates}): by hand")


def is_package_import(node: ast.AST, here: Where) -> bool:
    """``from specdec_ui import ...`` (or ``from . import ...`` at the top of specdec_ui)."""
    return isinstance(node, ast.ImportFrom) and absolute(node, here.package) == PACKAGE


def bound_modules(tree: ast.Module, here: Where) -> dict[str, str]:
    """Names bound by ``from specdec_ui import x [as y]`` -> the new module they will name."""
    bound = {}
    for node in ast.walk(tree):
        if is_package_import(node, here):
            for a in node.names:
                bound[a.asname or a.name] = moved(f"{PACKAGE}.{a.name}")
    return bound


def as_text(leaf: str, alias: str | None) -> str:
    return leaf if alias in (None, leaf) else f"{leaf} as {alias}"


def from_package(node: ast.ImportFrom, here: Where, taken: dict, renames: dict) -> list[str]:
    """``from specdec_ui import a, b as c`` as one statement per new parent package."""
    groups: dict[str, list[str]] = {}
    for name in node.names:
        target, bound = moved(f"{PACKAGE}.{name.name}"), name.asname or name.name
        parent, leaf = target.rsplit(".", 1)
        alias = name.asname
        if target != f"{PACKAGE}.{name.name}" or (alias and alias != leaf):
            alias = choose_alias(target, here, taken, bound)
            if alias != bound:
                renames[bound] = alias
        groups.setdefault(parent, []).append(as_text(leaf, alias))
    return [f"from {parent} import {', '.join(names)}" for parent, names in groups.items()]


def new_import(node: ast.stmt, here: Where, taken: dict, renames: dict) -> list[str] | None:
    """The statements that replace an import, or None when it stays as it is."""
    if isinstance(node, ast.Import):
        names = [as_text(moved(a.name), a.asname) for a in node.names]
        new = [f"import {', '.join(names)}"]
        return new if [moved(a.name) for a in node.names] != [a.name for a in node.names] else None
    module = absolute(node, here.package)
    if module is None or module.split(".")[0] != PACKAGE:
        return None
    if module == PACKAGE:
        old_names = ", ".join(as_text(a.name, a.asname) for a in node.names)
        new = from_package(node, here, taken, renames)
        same = new == [f"from {PACKAGE} import {old_names}"]
        return None if same and node.level == 0 else new
    if moved(module) == module and node.level == 0:
        return None
    names = ", ".join(as_text(a.name, a.asname) for a in node.names)
    return [f"from {moved(module)} import {names}"]


def line_starts(source: str) -> list[int]:
    """Offset of each line's first character (index 0 is line 1)."""
    starts, total = [], 0
    for line in source.splitlines(keepends=True):
        starts.append(total)
        total += len(line)
    return starts + [total]


def statement_edit(node: ast.stmt, lines: list[str], starts: list[int], new: list[str]):
    """(start, end, text) replacing the whole lines of an import, its trailing comment kept."""
    first, last = lines[node.lineno - 1], lines[node.end_lineno - 1]
    indent = first.encode()[: node.col_offset].decode()
    tail = last.rstrip("\r\n").encode()[node.end_col_offset :].decode()
    if indent.strip() or tail.strip()[:1] not in ("", "#"):
        raise MoveError(f"line {node.lineno}: an import shares its line; split it by hand")
    text = "\n".join(indent + statement for statement in new)
    text += f"  {tail.strip()}" if tail.strip() else ""
    end = starts[node.end_lineno - 1] + len(last.rstrip("\r\n"))
    return starts[node.lineno - 1], end, text


def used_names(tokens: list[tokenize.TokenInfo]) -> set[str]:
    """Names a file uses, attributes (after a dot) left out."""
    names, prev = set(), None
    for tok in tokens:
        if tok.type == tokenize.NAME and not (prev and prev.string == "."):
            names.add(tok.string)
        prev = tok
    return names


FSTRING = re.compile(r"^[rRbBuU]*[fF][rRbB]*['\"]")
FIELD = re.compile(r"(?<!\{)\{[^{}]*\}")


def fstring_edits(tok: tokenize.TokenInfo, renames: dict, starts: list[int]) -> list:
    """Renames inside an f-string's fields (Python 3.11 reads an f-string as one token)."""
    if not renames or not FSTRING.match(tok.string):
        return []
    name = re.compile(rf"(?<![\w.])({'|'.join(map(re.escape, renames))})\b")
    base = starts[tok.start[0] - 1] + tok.start[1]
    edits = []
    for field_ in FIELD.finditer(tok.string):
        for m in name.finditer(field_.group()):
            start = base + field_.start() + m.start()
            edits.append((start, start + len(m.group()), renames[m.group()]))
    return edits


def rename_edits(tokens: list, renames: dict, skip: set[int], starts: list[int], path: str):
    """(start, end, text) for each use of a renamed alias outside the rewritten imports."""
    edits, prev, depth = [], None, 0
    for i, tok in enumerate(tokens):
        depth += tok.string in "([{" if tok.type == tokenize.OP else 0
        depth -= tok.string in ")]}" if tok.type == tokenize.OP else 0
        if tok.type == tokenize.STRING and tok.start[0] not in skip:
            edits += fstring_edits(tok, renames, starts)
        hit = tok.type == tokenize.NAME and tok.string in renames and tok.start[0] not in skip
        if hit and not (prev and prev.string == "."):
            after = tokens[i + 1] if i + 1 < len(tokens) else None
            if depth and after is not None and after.string == "=":
                raise MoveError(f"{path}:{tok.start[0]}: {tok.string}= is a keyword: by hand")
            start = starts[tok.start[0] - 1] + tok.start[1]
            edits.append((start, start + len(tok.string), renames[tok.string]))
        prev = tok
    return edits


def attribute_edits(tokens: list, attributes: dict, skip: set[int], starts: list[int]) -> list:
    """(start, end, text) for ``module.alias`` where ``module`` names a module whose own
    alias was renamed (a test's ``view.lw`` once serving's view calls it model_pairs_work)."""
    edits = []
    for i in range(2, len(tokens)):
        owner, dot, tok = tokens[i - 2], tokens[i - 1], tokens[i]
        before = tokens[i - 3] if i >= 3 else None
        if dot.string != "." or owner.type != tokenize.NAME or tok.start[0] in skip:
            continue
        if before is not None and before.string == ".":
            continue
        new = attributes.get(owner.string, {}).get(tok.string)
        if tok.type == tokenize.NAME and new:
            start = starts[tok.start[0] - 1] + tok.start[1]
            edits.append((start, start + len(tok.string), new))
    return edits


def rewrite_imports(
    source: str, path: str, before: str | None = None, aliases_of: dict | None = None
) -> str:
    """A Python file (at ``path`` after the move, ``before`` it) with its imports of moved
    modules rewritten and the uses of renamed aliases followed (``aliases_of``: new module ->
    the aliases renamed inside it, for ``module.alias`` seen from elsewhere)."""
    return rewrite_and_rename(source, path, before, aliases_of or {})[0]


def rewrite_and_rename(source: str, path: str, before: str | None, aliases_of: dict):
    """(new text, {old alias: new alias}) of a Python file; see :func:`rewrite_imports`."""
    try:
        tree = ast.parse(source)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError) as err:
        raise MoveError(f"{path} does not parse: {err}") from err
    here, renames = where(before or path, path), {}
    bound = bound_modules(tree, here)
    imported = {a.name for n in ast.walk(tree) if is_package_import(n, here) for a in n.names}
    taken = dict.fromkeys(used_names(tokens) - imported - set(bound), "") | bound
    lines, starts = source.splitlines(keepends=True), line_starts(source)
    edits, skip = [], set()
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    for node in sorted(imports, key=lambda n: n.lineno):
        new = new_import(node, here, taken, renames)
        if new is not None:
            edits.append(statement_edit(node, lines, starts, new))
            skip |= set(range(node.lineno, node.end_lineno + 1))
    edits += rename_edits(tokens, renames, skip, starts, path)
    attributes = {name: aliases_of[m] for name, m in bound.items() if aliases_of.get(m)}
    edits += attribute_edits(tokens, attributes, skip, starts)
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    return source, renames


# --- rewriting mentions -----------------------------------------------------------------------


def mention_patterns() -> list[tuple[re.Pattern, object]]:
    """(pattern, replacement) for dotted names, paths, bare file names and :mod: roles."""
    olds = sorted((old for old, new in MAPPING.items() if old != new), key=len, reverse=True)
    alts = "|".join(olds)

    def dotted(m: re.Match) -> str:
        return f"{PACKAGE}.{MAPPING[m.group(1)]}"

    def slashed(m: re.Match) -> str:
        return f"{PACKAGE}/{MAPPING[m.group(1)].replace('.', '/')}"

    def bare(m: re.Match) -> str:
        return f"{MAPPING[m.group(1)].replace('.', '/')}.py"

    def role(m: re.Match) -> str:
        return f":mod:`{PACKAGE}.{MAPPING[m.group(1)]}`"

    def quoted_import(m: re.Match) -> str:
        parent, leaf = f"{PACKAGE}.{MAPPING[m.group(1)]}".rsplit(".", 1)
        return f"from {parent} import {leaf}" + (m.group(2) or f" as {m.group(1)}")

    def attribute(m: re.Match) -> str:
        return f"{m.group(1)}{MAPPING[m.group(2)]}."

    prose = "|".join(old for old in olds if "_" in old or old in PROSE_NAMES)

    return [
        (re.compile(rf"\bfrom {PACKAGE} import ({alts})\b( as \w+)?(?![\w,])"), quoted_import),
        (re.compile(rf"\b{PACKAGE}\.({alts})(?!\w)"), dotted),
        (re.compile(rf"\b{PACKAGE}/({alts})(?!\w)"), slashed),
        (re.compile(rf"(?<![\w/.])({alts})\.py\b"), bare),
        (re.compile(rf":mod:`({alts})`"), role),
        (re.compile(rf"(?<=`)(~?)({prose})\.(?!py\b)(?=[A-Za-z_])"), attribute),
    ]


def wrap_long_lines(text: str, old: str, width: int = 100) -> str:
    """Split the lines the rewrite made longer than ``width`` where they are prose: a comment
    line, or a line inside a docstring (code lines are ruff format's)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (SyntaxError, tokenize.TokenError):
        return text
    prose, literals = set(), leading_literals(tokens)
    for tok in tokens:
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            prose |= set(range(tok.start[0], tok.end[0] + 1))
    kept, out = set(old.splitlines()), []
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        body = line.rstrip("\r\n")
        comment = body.lstrip().startswith("#")
        if len(body) <= width or body in kept:
            out.append(line)
        elif comment or number in prose:
            out.append(split_line(body, width, comment) + line[len(body) :])
        elif number in literals:
            out.append(split_literal(body, literals[number], width) + line[len(body) :])
        else:
            out.append(line)
    return "".join(out)


def leading_literals(tokens: list[tokenize.TokenInfo]) -> dict[int, tokenize.TokenInfo]:
    """Line -> the one-line string literal that opens it, inside brackets after an opening
    bracket, a comma or another literal (so that it may be split in two adjacent literals)."""
    found, prev, depth = {}, None, 0
    for tok in tokens:
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        starts_line = prev is not None and prev.end[0] < tok.start[0]
        after = prev is not None and (prev.type == tokenize.STRING or prev.string in "([{,")
        if tok.type == tokenize.STRING and depth and starts_line and after:
            if tok.start[0] == tok.end[0]:
                found[tok.start[0]] = tok
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            prev = tok
    return found


def split_literal(body: str, tok: tokenize.TokenInfo, width: int) -> str:
    """A too-long string literal that opens its line as two adjacent literals (ruff then drops
    an ``f`` that no longer has a field)."""
    prefix = re.match(r"^[rRbBuUfF]*['\"]", tok.string).group()
    quote, start = prefix[-1], tok.start[1]
    depth, cut = 0, -1
    for i, char in enumerate(tok.string[: width - start - 1]):
        depth += (char == "{") - (char == "}")
        if char == " " and depth == 0 and i > len(prefix):
            cut = i
    if cut < 0:
        return body
    first, second = tok.string[: cut + 1] + quote, prefix + tok.string[cut + 1 :]
    if "{" not in second:  # no field left in the second half: a plain literal
        second = re.sub("[fF]", "", prefix) + tok.string[cut + 1 :]
    return body[:start] + first + "\n" + body[:start] + second + body[tok.end[1] :]


def split_line(body: str, width: int, comment: bool) -> str:
    """``body`` as lines of at most ``width`` (where spaces allow), same indentation."""
    indent = body[: len(body) - len(body.lstrip())] + ("# " if comment else "")
    lines = []
    while len(body) > width:
        cut = body.rfind(" ", len(indent) + 1, width + 1)
        if cut <= len(indent):
            break
        lines.append(body[:cut].rstrip())
        body = indent + body[cut + 1 :].lstrip()
    return "\n".join([*lines, body])


@functools.cache
def compiled_patterns() -> tuple:
    return tuple(mention_patterns())


def rewrite_mentions(text: str) -> str:
    for pattern, replace in compiled_patterns():
        text = pattern.sub(replace, text)
    return text


FILE_PARENTS = re.compile(
    r"(Path\(__file__\)(?:\.resolve\(\))?)((?:\.parent\b)+|\.parents\[(\d+)\])"
)


def deepen_file_paths(text: str, deeper: int) -> str:
    """``Path(__file__).resolve().parent.parent`` in a module moved ``deeper`` folders down
    still names the same folder (``.parents[2]``)."""

    def up(m: re.Match) -> str:
        levels = int(m.group(3)) + 1 if m.group(3) else m.group(2).count(".parent")
        levels += deeper
        return m.group(1) + (".parent" if levels == 1 else f".parents[{levels - 1}]")

    return FILE_PARENTS.sub(up, text) if deeper else text


def renamed_aliases(root: Path, moves: dict[str, str], files: list[str]) -> dict[str, dict]:
    """New module -> {old alias: new alias} renamed inside it, for each module of the package."""
    found = {}
    for path in files:
        if path.startswith(f"{PACKAGE}/") and path.endswith(".py"):
            after = moves.get(path, path)
            _, renames = rewrite_and_rename(read(root / path), after, path, {})
            module = after.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            found[module] = renames
    return found


def rewritten(root: Path, moves: dict[str, str]) -> dict[str, str]:
    """New path -> new text of every tracked text file the move changes, computed before
    anything is written (so that a refusal leaves the tree as it was)."""
    texts, files = {}, [p for p in tracked_files(root) if is_text(p) and p not in SKIPPED_FILES]
    aliases_of = renamed_aliases(root, moves, files)
    for path in files:
        after, old = moves.get(path, path), read(root / path)
        new = rewrite_imports(old, after, path, aliases_of) if path.endswith(".py") else old
        new = deepen_file_paths(new, after.count("/") - path.count("/"))
        new = rewrite_mentions(new)
        new = wrap_long_lines(new, old) if path.endswith(".py") else new
        if new != old:
            texts[after] = new
    return texts


# --- the run ----------------------------------------------------------------------------------


def run_ruff(root: Path, report: Report) -> None:
    """Sort the rewritten imports and format (the house's lint)."""
    ruff = shutil.which("ruff")
    if ruff is None:
        report.notes.append("ruff not found: run `ruff check --fix . && ruff format .`")
        return
    steps = (
        ["format", "--quiet", "."],
        ["check", "--fix", "--quiet", "."],
        ["format", "--quiet", "."],
    )
    for args in steps:
        done = subprocess.run([ruff, *args], cwd=root, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            report.notes.append(f"ruff {args[0]}: {(done.stdout + done.stderr).strip()[:2000]}")


def move(root: Path, dry_run: bool = False, ruff: bool = True) -> Report:
    """Check the tree, move the modules, rewrite imports and mentions; see the module doc."""
    report = Report()
    check_conflicts(root, tracked_files(root))
    check_inventory(root)
    check_top_level(root)
    moves = planned_moves(root, report)
    texts = rewritten(root, moves)
    report.moved = [f"{src} -> {dst}" for src, dst in moves.items()]
    report.rewritten = sorted(texts)
    if dry_run:
        report.notes.append("dry run: nothing was changed")
        return report
    write_room_inits(root, report)
    for src, dst in moves.items():
        git(root, "mv", src, dst)
    for path, text in texts.items():
        (root / path).write_text(text, encoding="utf-8")
    if write_package_doc(root):
        report.rewritten.append(f"{PACKAGE}/__init__.py")
    if ruff and (moves or texts):
        run_ruff(root, report)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--dry-run", action="store_true", help="say what would change")
    parser.add_argument("--no-ruff", action="store_true", help="skip ruff check --fix / format")
    args = parser.parse_args(argv)
    try:
        report = move(args.root, dry_run=args.dry_run, ruff=not args.no_ruff)
    except MoveError as err:
        print(f"move_into_rooms: {err}", file=sys.stderr)
        return 1
    for line in report.moved:
        print(f"moved     {line}")
    for line in sorted(set(report.rewritten)):
        print(f"rewrote   {line}")
    for line in report.notes:
        print(f"note      {line}")
    if not (report.moved or report.rewritten):
        print("nothing to do: the tree is already in rooms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
