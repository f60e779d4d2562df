"""Snapshot the English text that ships with Python into specdec_core/lm/assets/corpus.json.gz.

Sources (all under the PSF licence, see specdec_core/lm/assets/ATTRIBUTION.md):
- ``pydoc_data.topics``: the language-reference topics ``help()`` shows (one document each);
- IDLE's help (``idlelib/help.html``, tags stripped): one document;
- long docstrings (>= 200 characters) of the pure-Python standard library, read with
  ``ast`` (nothing is imported or executed): one document per module.

The text differs between Python patch releases, so the app never rebuilds it from the
running interpreter: it reads the snapshot. Text is normalised to printable ASCII plus
newline (NFKD, then non-ASCII dropped, tabs expanded to 4 spaces); the snapshot records
the Python version it was taken from. Run: ``python tools/snapshot_corpus.py``.
"""

from __future__ import annotations

import ast
import gzip
import html.parser
import inspect
import json
import pathlib
import sys
import sysconfig
import unicodedata

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "specdec_core" / "lm" / "assets" / "corpus.json.gz"
MIN_DOCSTRING = 200
SKIP_TOP = {
    "test",
    "idlelib",
    "tkinter",
    "turtledemo",
    "lib2to3",
    "ensurepip",
    "distutils",
    "site-packages",
    "dist-packages",
    "pydoc_data",
    "__phello__",
    "unittest",
}


def clean(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.expandtabs(4))
    text = "".join(ch for ch in text if ch == "\n" or " " <= ch <= "~")
    lines = [line.rstrip() for line in text.splitlines()]
    return "\n".join(lines).strip("\n")


class _HelpText(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "head"):
            self.skip += 1
        elif tag in ("p", "div", "li", "h1", "h2", "h3", "pre", "dt", "dd", "br"):
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "head"):
            self.skip = max(0, self.skip - 1)

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def idle_help() -> str:
    import idlelib

    parser = _HelpText()
    parser.feed((pathlib.Path(idlelib.__file__).parent / "help.html").read_text(encoding="utf-8"))
    paragraphs = [" ".join(p.split()) for p in "".join(parser.parts).split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


def docstrings() -> list[tuple[str, str]]:
    std = pathlib.Path(sysconfig.get_paths()["stdlib"])
    files = sorted(std.glob("*.py")) + sorted(std.glob("*/*.py"))
    docs = []
    for path in files:
        rel = path.relative_to(std)
        if rel.parts[0] in SKIP_TOP:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        nodes = [tree] + [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        texts = [
            inspect.cleandoc(d)
            for n in nodes
            if (d := ast.get_docstring(n, clean=False)) and len(d) >= MIN_DOCSTRING
        ]
        if texts:
            docs.append(("docstrings:" + rel.as_posix(), "\n\n".join(texts)))
    return docs


def main() -> None:
    import pydoc_data.topics as topics

    documents = [("topic:" + name, topics.topics[name]) for name in sorted(topics.topics)]
    documents.append(("idle:help", idle_help()))
    documents.extend(docstrings())
    documents = [{"name": n, "text": clean(t)} for n, t in documents]
    documents = [d for d in documents if d["text"]]
    payload = {
        "python_version": sys.version.split()[0],
        "licence": "PSF-2.0",
        "documents": documents,
    }
    data = json.dumps(payload, ensure_ascii=True, indent=0).encode("ascii")
    OUT.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    total = sum(len(d["text"]) for d in documents)
    print(f"{len(documents)} documents, {total:,} characters, {OUT.stat().st_size:,} bytes gz")


if __name__ == "__main__":
    main()
