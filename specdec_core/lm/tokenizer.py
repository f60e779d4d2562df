"""A small byte-pair-encoding (BPE) tokenizer over characters, stored as JSON.

Sennrich et al. 2016 (BPE for subwords), with GPT-2's pre-tokenisation (Radford et
al. 2019): the text is cut into pieces (a word with its leading space, digits,
punctuation, runs of spaces), and inside each piece the learned merges are applied in
the order they were learned. Every piece is a substring and merges only join
neighbours, so ``decode(encode(text)) == text`` exactly. The base alphabet is the set of
characters of the training text; a character outside it raises :class:`PromptError`
naming it (no silent replacement).
"""

from __future__ import annotations

import collections
import functools
import itertools
import json
import re
from pathlib import Path

from .errors import PromptError

PATTERN = r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+"
_PIECES = re.compile(PATTERN)


class Tokenizer:
    """Character-level BPE: ``vocab[i]`` is the text of token i."""

    def __init__(self, alphabet: list[str], merges: list[tuple[str, str]]) -> None:
        self.alphabet = tuple(alphabet)
        self.merges = tuple((a, b) for a, b in merges)
        self.vocab: tuple[str, ...] = self.alphabet + tuple(a + b for a, b in self.merges)
        self.ids = {s: i for i, s in enumerate(self.vocab)}
        if len(self.ids) != len(self.vocab):
            raise ValueError("tokenizer vocabulary has duplicate entries")
        self.ranks = {pair: r for r, pair in enumerate(self.merges)}
        self._chars = frozenset(self.alphabet)
        self._encode_piece = functools.lru_cache(maxsize=65536)(self._bpe)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def check_text(self, text: str) -> None:
        """Raise PromptError naming the first character the alphabet lacks."""
        if set(text) <= self._chars:  # the common case, at C speed (a whole corpus: ~10 ms)
            return
        for i, ch in enumerate(text):
            if ch not in self._chars:
                raise PromptError(
                    f"the prompt has the character {ch!r} (U+{ord(ch):04X}) at position {i + 1}, "
                    "which the tokenizer cannot encode; use plain ASCII letters, digits, "
                    "punctuation, spaces and newlines."
                )

    def _bpe(self, piece: str) -> tuple[int, ...]:
        parts = list(piece)
        while len(parts) > 1:
            best, best_rank = -1, len(self.ranks)
            for i in range(len(parts) - 1):
                r = self.ranks.get((parts[i], parts[i + 1]), best_rank)
                if r < best_rank:
                    best, best_rank = i, r
            if best < 0:
                break
            parts[best : best + 2] = [parts[best] + parts[best + 1]]
        return tuple(self.ids[p] for p in parts)

    def encode(self, text: str) -> list[int]:
        """Text -> token ids (raises PromptError for characters outside the alphabet)."""
        self.check_text(text)
        pieces = _PIECES.findall(text)
        ids_of = {piece: self._encode_piece(piece) for piece in set(pieces)}  # each once
        return list(itertools.chain.from_iterable(map(ids_of.__getitem__, pieces)))

    def decode(self, ids) -> str:
        """Token ids -> text (exact inverse of :meth:`encode`)."""
        return "".join(self.vocab[int(i)] for i in ids)

    def token_text(self, i: int) -> str:
        return self.vocab[int(i)]

    def to_json(self) -> str:
        return json.dumps(
            {
                "kind": "char-bpe",
                "pattern": PATTERN,
                "alphabet": list(self.alphabet),
                "merges": [list(m) for m in self.merges],
            },
            indent=0,
        )

    @classmethod
    def from_json(cls, text: str) -> Tokenizer:
        data = json.loads(text)
        if data.get("kind") != "char-bpe" or data.get("pattern") != PATTERN:
            raise ValueError("not a char-bpe tokenizer file of this version")
        return cls(data["alphabet"], [tuple(m) for m in data["merges"]])

    @classmethod
    def load(cls, path: str | Path) -> Tokenizer:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))


def train_bpe(text: str, vocab_size: int = 512) -> Tokenizer:
    """Learn merges on ``text`` until the vocabulary has ``vocab_size`` entries.

    Each step merges the most frequent adjacent pair inside pieces (ties broken by the
    pair's text, so training is deterministic). Pair counts are updated incrementally.
    """
    alphabet = sorted(set(text))
    words = collections.Counter(_PIECES.findall(text))
    seqs = [list(w) for w in words]
    freqs = list(words.values())
    pairs: collections.Counter = collections.Counter()
    where: dict[tuple[str, str], set[int]] = collections.defaultdict(set)
    for wi, seq in enumerate(seqs):
        for a, b in zip(seq, seq[1:], strict=False):
            pairs[(a, b)] += freqs[wi]
            where[(a, b)].add(wi)
    merges: list[tuple[str, str]] = []
    while len(alphabet) + len(merges) < vocab_size and pairs:
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        if pairs[best] <= 0:
            break
        merges.append(best)
        joined = best[0] + best[1]
        for wi in list(where[best]):
            seq, f = seqs[wi], freqs[wi]
            for a, b in zip(seq, seq[1:], strict=False):
                pairs[(a, b)] -= f
            new, i = [], 0
            while i < len(seq):
                if i + 1 < len(seq) and seq[i] == best[0] and seq[i + 1] == best[1]:
                    new.append(joined)
                    i += 2
                else:
                    new.append(seq[i])
                    i += 1
            seqs[wi] = new
            for a, b in zip(new, new[1:], strict=False):
                pairs[(a, b)] += f
                where[(a, b)].add(wi)
        del pairs[best]
        where.pop(best, None)
        for key in [k for k, v in pairs.items() if v <= 0]:
            del pairs[key]
    return Tokenizer(alphabet, merges)
