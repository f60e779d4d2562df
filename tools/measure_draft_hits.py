"""How often the text-reading drafts guess the 4-layer target's greedy choice (issue 20).

The adaptive draft length (:mod:`specdec_core.lm.adaptive`) needs, for every guess of a
draft without a model, the chance that the target keeps it. This script measures it on
the target's own greedy text after the first ``CONTEXT_TOKENS`` tokens of held-out
paragraphs: paragraphs (over 200 characters) of the validation documents, leaving out
the documents whose openings are the benchmark's prompts
(``benchmarks/prompts_model_pairs.txt``), every other one (``--half 0``; the other half,
``--half 1``, was kept to judge the draft-length rule, never to set a number). At every
position of the generated text:

- prompt lookup with match lengths 4..1 (:func:`.prompt_lookup.find_match`, the longest
  match first): how often the j-th continuation token (j = 1, 2, 3+) is the target's
  choice, given that the tokens before it were;
- the choice table: how often its guess is the target's choice, by the table's share
  (bins of 0.1 up to 0.9, then [0.9, 0.96), [0.96, 1) and a share of exactly 1, which is
  mostly a context seen once or twice), and the mean share in each bin: for a round's
  first guess, and for a later guess given that the ones before it were right (a round
  of up to ``ROUND_GUESSES`` guesses, each read after the ones before);
- the weight of the calibration's prior (:data:`.adaptive.PRIOR_CHECKS_MEASURED`), by
  empirical Bayes: with r_t = kept / estimated over text t (the shipped draft's rounds of
  3 guesses), tau^2 = var_t(r_t) - mean_t(binomial variance of r_t) is how much the
  texts really differ, and n0 = mean(1 - p) / tau^2 (in estimated tokens) is the prior
  weight that shrinks a run's own ratio towards 1 as much as that spread asks.

It prints the numbers that ``prompt_lookup.KEEP_BY_MATCH``, ``choice_table``'s
``SHARE_POINTS`` / ``SHARE_KEEP`` / ``LATER_POINTS`` / ``LATER_KEEP`` and
``adaptive.PRIOR_CHECKS_MEASURED`` hold. Deterministic (T = 0); about a minute.

    OPENBLAS_NUM_THREADS=1 python tools/measure_draft_hits.py [--half 0]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from bisect import bisect_right
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specdec_core.lm import autoregressive_generate, load_corpus  # noqa: E402
from specdec_core.lm.pairs import _choice_table, _gpt, load_pair, load_tokenizer  # noqa: E402
from specdec_core.lm.prompt_lookup import find_match  # noqa: E402

PROMPTS_FILE = ROOT / "benchmarks" / "prompts_model_pairs.txt"
CONTEXT_TOKENS, NEW_TOKENS = 32, 200
ROUND_GUESSES = 8  # the adaptive benchmark's K: a table guess may be a round's 8th
SHARE_EDGES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.96, 1.0)  # 1.0: exactly 1


def benchmark_openings(path: Path = PROMPTS_FILE) -> list[str]:
    """The benchmark's held-out prompts: openings of validation documents."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t", 1) for line in lines if line.strip() and not line.startswith("#")]
    return [text.replace("\\n", "\n") for source, text in rows if source == "held-out"]


def held_out_paragraphs(half: int) -> list[str]:
    """Every other paragraph (> 200 characters) of the validation documents that no
    benchmark prompt opens, starting at ``half`` (0 or 1)."""
    openings = benchmark_openings()
    docs = [d for d in load_corpus().validation if not any(d.startswith(o) for o in openings)]
    paragraphs = [p for d in docs for p in d.split("\n\n") if len(p) > 200]
    return paragraphs[half::2]


def greedy_texts(half: int) -> list[list[int]]:
    """Context + the target's greedy continuation, one per held-out paragraph."""
    tok, target = load_tokenizer(), _gpt("target")
    texts = []
    for para in held_out_paragraphs(half):
        ids = tok.encode(para)[:CONTEXT_TOKENS]
        run = autoregressive_generate(
            target, ids, max_new_tokens=NEW_TOKENS, temperature=0.0, rng=np.random.default_rng(0)
        )
        texts.append([*ids, *run.tokens])
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
    up to ROUND_GUESSES guesses, each read after the ones before, as the draft reads them)."""
    table, first, later = _choice_table(), {}, {}
    for seq in texts:
        for i in range(CONTEXT_TOKENS, len(seq) - 1):
            ctx = list(seq[:i])
            for j in range(min(ROUND_GUESSES, len(seq) - i)):
                x, _, share = table.lookup(ctx)
                cell = (first if j == 0 else later).setdefault(
                    bisect_right(SHARE_EDGES, share), [0, 0, 0.0]
                )
                cell[0] += x == seq[i + j]
                cell[1] += 1
                cell[2] += share
                if x != seq[i + j]:
                    break
                ctx.append(x)
    return first, later


def prior_weight(texts) -> tuple[float, float, float]:
    """(mean r_t, tau^2, n0) of the shipped draft's estimates (module docstring)."""
    draft = load_pair("lookup-table-to-gpt-4L")[0]
    ratios, noise, misses = [], [], []
    for seq in texts:
        kept = estimated = spread = 0.0
        for i in range(CONTEXT_TOKENS, len(seq) - 3):
            guesses, chances = draft.keep_chances(seq[:i], 3)
            for j, (x, p) in enumerate(zip(guesses, chances, strict=True)):
                kept, estimated = kept + (x == seq[i + j]), estimated + p
                spread += p * (1 - p)
                if x != seq[i + j]:
                    break
        ratios.append(kept / estimated)
        noise.append(spread / estimated**2)
        misses.append(spread / estimated)
    tau2 = statistics.pvariance(ratios) - statistics.fmean(noise)
    return statistics.fmean(ratios), tau2, statistics.fmean(misses) / tau2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--half", type=int, choices=(0, 1), default=0)
    texts = greedy_texts(ap.parse_args().half)
    print(f"{len(texts)} held-out paragraphs, {NEW_TOKENS} greedy tokens after each")
    for max_n in (4, 3):  # the choice-table draft's lookup, then plain prompt lookup's
        print(f"prompt lookup, n = {max_n}..1: (match length n, j-th token) hit rate (tries)")
        for (n, j), (hit, tries) in sorted(lookup_hits(texts, max_n).items()):
            print(f"  n = {n}, j = {j}{'+' if j == 3 else ' '}: {hit / tries:.3f} ({tries})")
    edges = (0.0, *SHARE_EDGES)
    for name, hits in zip(("first guess", "later guess"), table_hits(texts), strict=True):
        print(f"choice table, {name}: share bin -> mean share, hit rate (tries)")
        for b, (hit, tries, total) in sorted(hits.items()):
            what = "= 1.0" if b == len(SHARE_EDGES) else f"[{edges[b]:.2f}, {edges[b + 1]:.2f})"
            print(f"  {what}: {total / tries:.3f} -> {hit / tries:.3f} ({tries})")
    mean, tau2, n0 = prior_weight(texts)
    print(f"calibration prior: mean kept / estimated {mean:.3f}, tau^2 {tau2:.4f}, n0 {n0:.1f}")


if __name__ == "__main__":
    main()
