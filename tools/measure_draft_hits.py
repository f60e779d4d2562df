"""How often the text-reading drafts guess the 4-layer target's greedy choice (issue 20).

The adaptive draft length (:mod:`specdec_core.lm.adaptive`) needs, for every guess of a
draft without a model, the chance that the target keeps it. This script measures it on
the target's own greedy text after ``N_CONTEXTS`` openings of validation paragraphs (never
the benchmark's prompts): at every position of the generated text,

- prompt lookup with match lengths 4..1 (:func:`.prompt_lookup.find_match`, the longest
  match first): how often the j-th continuation token (j = 1, 2, 3+) is the target's
  choice, given that the tokens before it were;
- the choice table: how often its guess is the target's choice, by the table's share
  (bins of 0.1), and the mean share in each bin: for a round's first guess, and for a
  later guess given that the ones before it were right (they are right more often: a
  predictable phrase stays predictable).

It prints the numbers that ``prompt_lookup.KEEP_BY_MATCH`` and ``choice_table``'s
``SHARE_POINTS`` / ``SHARE_KEEP`` / ``SHARE_KEEP_LATER`` hold. Deterministic (T = 0).

    OPENBLAS_NUM_THREADS=1 python tools/measure_draft_hits.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specdec_core.lm import autoregressive_generate, load_corpus  # noqa: E402
from specdec_core.lm.pairs import _choice_table, _gpt, load_tokenizer  # noqa: E402
from specdec_core.lm.prompt_lookup import find_match  # noqa: E402

N_CONTEXTS, CONTEXT_TOKENS, NEW_TOKENS = 40, 32, 200


def greedy_texts() -> list[list[int]]:
    """Context + the target's greedy continuation, for N_CONTEXTS validation paragraphs."""
    tok, target = load_tokenizer(), _gpt("target")
    paragraphs = [p for p in load_corpus().validation_text.split("\n\n") if len(p) > 200]
    step = max(1, len(paragraphs) // N_CONTEXTS)
    texts = []
    for para in paragraphs[::step][:N_CONTEXTS]:
        ids = tok.encode(para)[:CONTEXT_TOKENS]
        run = autoregressive_generate(
            target, ids, max_new_tokens=NEW_TOKENS, temperature=0.0, rng=np.random.default_rng(0)
        )
        texts.append(ids + run.tokens)
    return texts


def lookup_hits(texts, max_n: int = 4) -> dict:
    """(n, j) -> [hits, tries]: the j-th token of a match of length n (j capped at 3)."""
    out: dict = {}
    for seq in texts:
        for i in range(CONTEXT_TOKENS, len(seq) - 1):
            cont, n = find_match(seq[:i], 4, max_n, 1)  # the longest match first
            for j, x in enumerate(cont):
                if i + j >= len(seq):
                    break
                cell = out.setdefault((n, min(j + 1, 3)), [0, 0])
                cell[1] += 1
                if x != seq[i + j]:
                    break
                cell[0] += 1
    return out


def table_hits(texts) -> tuple[dict, dict]:
    """share bin -> [hits, tries, sum of shares] of the table's guesses: the first guess
    of a round, and a later one given that the guesses before it were right (a round of
    up to 3 guesses, each read after the ones before, as the draft reads them)."""
    table, first, later = _choice_table(), {}, {}
    for seq in texts:
        for i in range(CONTEXT_TOKENS, len(seq) - 3):
            ctx = list(seq[:i])
            for j in range(3):
                x, _, share = table.lookup(ctx)
                cell = (first if j == 0 else later).setdefault(min(int(share * 10), 9), [0, 0, 0.0])
                cell[0] += x == seq[i + j]
                cell[1] += 1
                cell[2] += share
                if x != seq[i + j]:
                    break
                ctx.append(x)
    return first, later


def main() -> None:
    texts = greedy_texts()
    for max_n in (4, 3):  # the choice-table draft's lookup, then plain prompt lookup's
        print(f"prompt lookup, n = {max_n}..1: (match length n, j-th token) hit rate (tries)")
        for (n, j), (hit, tries) in sorted(lookup_hits(texts, max_n).items()):
            print(f"  n = {n}, j = {j}{'+' if j == 3 else ' '}: {hit / tries:.3f} ({tries})")
    for name, hits in zip(("first guess", "later guess"), table_hits(texts), strict=True):
        print(f"choice table, {name}: share bin -> mean share, hit rate (tries)")
        for b, (hit, tries, total) in sorted(hits.items()):
            low, high = b / 10, (b + 1) / 10
            print(f"  [{low:.1f}, {high:.1f}): {total / tries:.3f} -> {hit / tries:.3f} ({tries})")


if __name__ == "__main__":
    main()
