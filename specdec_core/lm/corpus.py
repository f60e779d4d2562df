"""The training text: English that ships with Python, read from a gzipped snapshot.

The snapshot (``assets/corpus.json.gz``, made by ``tools/snapshot_corpus.py``) holds
documents: pydoc topics, IDLE's help and long stdlib docstrings (PSF licence, see
``assets/ATTRIBUTION.md``). :func:`load_corpus` splits it by document (about one in ten
goes to validation, chosen by a CRC32 of its name, so the split never depends on order)
and removes from validation every paragraph that also occurs in training, because many
topics repeat each other word for word.
"""

from __future__ import annotations

import functools
import gzip
import json
import zlib
from dataclasses import dataclass
from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "assets"
CORPUS_FILE = ASSETS / "corpus.json.gz"
VALIDATION_BUCKETS = 10  # crc32(name) % 10 == 0 -> validation


@dataclass(frozen=True)
class Corpus:
    """Train and validation text, one string per document."""

    train: tuple[str, ...]
    validation: tuple[str, ...]
    python_version: str

    @property
    def train_text(self) -> str:
        return "\n\n".join(self.train)

    @property
    def validation_text(self) -> str:
        return "\n\n".join(self.validation)


def is_validation(name: str) -> bool:
    """A document goes to validation when crc32(name) % 10 == 0 (about 10 %)."""
    return zlib.crc32(name.encode("utf-8")) % VALIDATION_BUCKETS == 0


def paragraphs(text: str) -> list[str]:
    """Paragraphs are separated by blank lines."""
    return [p for p in text.split("\n\n") if p.strip()]


def split_documents(documents: list[dict]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split by document, then drop validation paragraphs that also occur in training."""
    train = tuple(d["text"] for d in documents if not is_validation(d["name"]))
    seen = {p.strip() for text in train for p in paragraphs(text)}
    validation = []
    for d in documents:
        if is_validation(d["name"]):
            kept = [p for p in paragraphs(d["text"]) if p.strip() not in seen]
            if kept:
                validation.append("\n\n".join(kept))
    return train, tuple(validation)


@functools.lru_cache(maxsize=1)
def load_corpus(path: str | None = None) -> Corpus:
    """Read the snapshot and split it (cached: the file is read once per process)."""
    payload = json.loads(gzip.decompress(Path(path or CORPUS_FILE).read_bytes()))
    train, validation = split_documents(payload["documents"])
    return Corpus(train, validation, payload["python_version"])
