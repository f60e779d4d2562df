"""Move the flat ``specdec_ui`` package into rooms (issue 26, item 3); safe to run again.

    python tools/move_into_rooms.py [--root PATH] [--dry-run] [--no-ruff]

The rooms: ``specdec_ui/kit/`` (what every page draws with), ``specdec_ui/runtime/`` (the
server's machinery, no Streamlit) and one subpackage per page, named after its script in
``pages/scripts/`` (its view, work and figures). A few app-wide modules stay at the top.

What it does, in order, and why it can run again on a tree that other branches changed:

1. refuses a tree with merge-conflict markers, a module of ``specdec_ui`` that :data:`MAPPING`
   does not name (a branch added it: say where it goes), or a top level over
   :data:`MAX_TOP_LEVEL` modules;
2. ``git mv`` each old module to its room (a module already moved, or absent from this tree,
   is skipped with a note) and writes each room's ``__init__.py`` if it is missing;
3. rewrites every import of a moved module in every tracked Python file (``import
   specdec_ui.x``, ``from specdec_ui import x [as y]``, ``from specdec_ui.x import ...`` and,
   inside ``specdec_ui``, relative imports, which all become absolute); an alias becomes the
   module's name in its room (``figures`` in the same room, ``losslessness_figures`` from
   elsewhere), and the file's uses of the old alias follow (``fl`` meant figures_lab in
   one view and figures_lm in another; :func:`choose_alias`);
4. rewrites every mention in tracked text files: dotted (``"specdec_ui.lm_work.X"`` in a
   monkeypatch, ``python -m specdec_ui.helper``), paths (``specdec_ui/lab_view.py``), bare
   file names (``lab_work.py`` -> ``losslessness/work.py``) and ``:mod:`serving_log_view```;
5. runs ``ruff check --fix`` and ``ruff format`` (imports sorted), unless ``--no-ruff``.

Every step only acts on old names, so a second run finds nothing to do.
"""

from __future__ import annotations

import argparse
import ast
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
    "self_test_view": "self_test.view",
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
        "Imported by the kit and the page rooms. Imports the core only, never the kit nor a page "
        "room (tests/test_import_directions.py checks it, and that importing it loads no "
        "Streamlit).",
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
    return "\n\n".join(textwrap.fill(p, width=92) for p in paragraphs)


def write_room_inits(root: Path, report: Report, dry_run: bool) -> None:
    """Each room's ``__init__.py`` with its docstring, where it is missing."""
    for room in sorted(room_names()):
        init = root / PACKAGE / room / "__init__.py"
        if init.exists():
            continue
        report.notes.append(f"wrote {init.relative_to(root)}")
        if not dry_run:
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text(f'"""{room_doc(room)}\n"""\n', encoding="utf-8")
            git(root, "add", str(init.relative_to(root)))


def move_modules(root: Path, report: Report, dry_run: bool) -> None:
    """``git mv`` every old module of MAPPING that is still flat; note the ones absent."""
    for old, new in MAPPING.items():
        if old == new:
            continue
        src, dst = f"{PACKAGE}/{old}.py", new_path(new)
        if (root / src).exists() and (root / dst).exists():
            raise MoveError(f"both {src} and {dst} exist: merge them by hand, then run again")
        if (root / src).exists():
            report.moved.append(f"{src} -> {dst}")
            if not dry_run:
                git(root, "mv", src, dst)
        elif not (root / dst).exists():
            report.notes.append(f"skipped {src}: not in this tree")


def write_package_doc(root: Path, dry_run: bool) -> bool:
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
    if not dry_run:
        init.write_text(new, encoding="utf-8")
    return True


# --- rewriting imports ------------------------------------------------------------------------


@dataclass(frozen=True)
class Where:
    """A file's place in the house: its package (for relative imports) and its page room."""

    package: str | None
    room: str | None


def where(path: str) -> Where:
    """'specdec_ui/round/view.py' -> (specdec_ui.round, round); 'pages/scripts/round.py' -> room."""
    parts = Path(path).with_suffix("").parts
    if parts[0] == PACKAGE:
        room = parts[1] if len(parts) > 2 and parts[1] in PAGE_ROOMS else None
        return Where(".".join(parts[:-1]), room)
    if parts[:2] == ("pages", "scripts") and len(parts) == 3:
        return Where(None, parts[2])
    return Where(None, None)


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


def choose_alias(target: str, here: Where, taken: set[str], bound: str) -> str:
    """The name a moved module is bound to: its leaf in its own room (``figures``), else
    ``room_leaf`` (``losslessness_figures``), so that no alias means two modules."""
    parts = target.split(".")
    leaf, room = parts[-1], (parts[1] if len(parts) == 3 else None)
    if room is None:
        candidates = [leaf]
    elif room in PAGE_ROOMS and room != here.room:
        candidates = [f"{room}_{leaf}"]
    else:
        candidates = [leaf, f"{room}_{leaf}"]
    for name in candidates:
        if name == bound or name not in taken:
            taken.add(name)
            return name
    raise MoveError(f"no free name for {target} (tried {candidates}): rename by hand")


def as_text(leaf: str, alias: str | None) -> str:
    return leaf if alias in (None, leaf) else f"{leaf} as {alias}"


def from_package(node: ast.ImportFrom, here: Where, taken: set[str], renames: dict) -> list[str]:
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


def new_import(node: ast.stmt, here: Where, taken: set[str], renames: dict) -> list[str] | None:
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


def rename_edits(tokens: list, renames: dict, skip: set[int], starts: list[int], path: str):
    """(start, end, text) for each use of a renamed alias outside the rewritten imports."""
    edits, prev, depth = [], None, 0
    for i, tok in enumerate(tokens):
        depth += tok.string in "([{" if tok.type == tokenize.OP else 0
        depth -= tok.string in ")]}" if tok.type == tokenize.OP else 0
        hit = tok.type == tokenize.NAME and tok.string in renames and tok.start[0] not in skip
        if hit and not (prev and prev.string == "."):
            after = tokens[i + 1] if i + 1 < len(tokens) else None
            if depth and after is not None and after.string == "=":
                raise MoveError(f"{path}:{tok.start[0]}: {tok.string}= is a keyword: by hand")
            start = starts[tok.start[0] - 1] + tok.start[1]
            edits.append((start, start + len(tok.string), renames[tok.string]))
        prev = tok
    return edits


def rewrite_imports(source: str, path: str) -> str:
    """A Python file with its imports of moved modules rewritten and renamed aliases followed."""
    try:
        tree = ast.parse(source)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError) as err:
        raise MoveError(f"{path} does not parse: {err}") from err
    here, taken, renames = where(path), used_names(tokens), {}
    lines, starts = source.splitlines(keepends=True), line_starts(source)
    edits, skip = [], set()
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    for node in sorted(imports, key=lambda n: n.lineno):
        new = new_import(node, here, taken, renames)
        if new is not None:
            edits.append(statement_edit(node, lines, starts, new))
            skip |= set(range(node.lineno, node.end_lineno + 1))
    edits += rename_edits(tokens, renames, skip, starts, path)
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    return source


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

    return [
        (re.compile(rf"\b{PACKAGE}\.({alts})(?!\w)"), dotted),
        (re.compile(rf"\b{PACKAGE}/({alts})(?!\w)"), slashed),
        (re.compile(rf"(?<![\w/.])({alts})\.py\b"), bare),
        (re.compile(rf":mod:`({alts})`"), role),
    ]


def rewrite_mentions(text: str) -> str:
    for pattern, replace in mention_patterns():
        text = pattern.sub(replace, text)
    return text


def rewrite_file(root: Path, path: str, dry_run: bool) -> bool:
    """Rewrite one tracked text file; True when it changed."""
    old = read(root / path)
    new = rewrite_imports(old, path) if path.endswith(".py") else old
    new = rewrite_mentions(new)
    if new != old and not dry_run:
        (root / path).write_text(new, encoding="utf-8")
    return new != old


# --- the run ----------------------------------------------------------------------------------


def run_ruff(root: Path, report: Report) -> None:
    """Sort the rewritten imports and format (the house's lint)."""
    ruff = shutil.which("ruff")
    if ruff is None:
        report.notes.append("ruff not found: run `ruff check --fix . && ruff format .`")
        return
    for args in (["check", "--fix", "--quiet", "."], ["format", "--quiet", "."]):
        done = subprocess.run([ruff, *args], cwd=root, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            report.notes.append(f"ruff {args[0]}: {(done.stdout + done.stderr).strip()[:2000]}")


def move(root: Path, dry_run: bool = False, ruff: bool = True) -> Report:
    """Check the tree, move the modules, rewrite imports and mentions; see the module doc."""
    report = Report()
    check_conflicts(root, tracked_files(root))
    check_inventory(root)
    check_top_level(root)
    if dry_run:
        report.notes.append("dry run: files are listed, not changed (imports of moved files too)")
    move_modules(root, report, dry_run)
    write_room_inits(root, report, dry_run)
    if write_package_doc(root, dry_run):
        report.rewritten.append(f"{PACKAGE}/__init__.py")
    for path in tracked_files(root):
        if is_text(path) and path not in SKIPPED_FILES and rewrite_file(root, path, dry_run):
            report.rewritten.append(path)
    if ruff and not dry_run and (report.moved or report.rewritten):
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
