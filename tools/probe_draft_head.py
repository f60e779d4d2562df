"""Probe (issue 12): does a head on the target's own hidden state guess better than the table?

A Medusa-style draft (Cai et al. 2024) reads the target's last hidden state, which the
verify computes anyway, so it costs one small matrix product: nearly free, like the
shipped lookup + choice-table draft. This script measures whether it would agree more
with the target at T = 0. It writes nothing and ships nothing.

1. The shipped 4-layer target writes greedy continuations (``NEW`` tokens) of random
   ``CTX``-token contexts: ``--train`` from the training split, ``--held-out`` from the
   validation split. One teacher-forced pass over each (``GPTModel.final_hidden``) gives
   the final normalised hidden state h_i at every generated position i (the output layer
   turns it into the logits whose argmax is the next token y = x_{i+1}).
2. Two softmax heads (torch, seed 0): x_{i+2} from (h_i, embedding of y), and x_{i+2}
   from h_i alone; a third guesses x_{i+3} from (h_i, y).
3. The same held-out positions for the shipped draft's ``guesses`` after x_{..i+1}: its
   first guess right, and its first two right.

    pip install -r requirements-train.txt
    OPENBLAS_NUM_THREADS=1 python tools/probe_draft_head.py   # about 2 minutes

Result on 2 December 2026 (700 training, 120 held-out continuations): the head on
(h_i, y) was right 0.48 of the time on held-out text (0.72 on its training text), the
head on h_i alone 0.32, the +2 head 0.29; the lookup + table draft 0.58 (both of its
first two guesses right: 0.39). So the shipped draft stays the best free draft here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specdec_core.lm.blas import limit_blas_threads  # noqa: E402
from specdec_core.lm.corpus import load_corpus  # noqa: E402
from specdec_core.lm.pairs import _gpt, corpus_token_ids, load_pair, load_tokenizer  # noqa: E402

CTX, NEW = 24, 64  # context tokens, greedy tokens after them
DRAFT_PAIR = "lookup-table-to-gpt-4L"


def greedy_continuation(target, context: np.ndarray) -> np.ndarray:
    """context followed by the target's NEW greedy tokens (KV cache, argmax)."""
    runner = target.fresh()
    runner.extend(context[:-1], last_only=True)
    out, last = [int(t) for t in context], int(context[-1])
    for _ in range(NEW):
        last = int(runner.extend((last,))[0].argmax())
        out.append(last)
    return np.array(out)


def positions(target, source: np.ndarray, n: int, rng: np.random.Generator):
    """Hidden states h_i, next tokens y, x_{i+2}, x_{i+3} and the sequences."""
    rows, seqs = [], []
    for _ in range(n):
        start = int(rng.integers(0, source.size - CTX))
        seq = greedy_continuation(target, source[start : start + CTX])
        h = target.fresh().final_hidden(seq)  # (m, d), teacher-forced
        for i in range(CTX - 1, seq.size - 3):
            rows.append((h[i], seq[i + 1], seq[i + 2], seq[i + 3]))
        seqs.append(seq)
    h, y, a, b = (np.array(col) for col in zip(*rows, strict=True))
    return h.astype(np.float32), y, a, b, seqs


def head_accuracy(train, held_out, label: int, use_token: bool, steps: int = 600) -> tuple:
    """(train, held-out) top-1 accuracy of softmax(W [h; E y] + b) trained on ``label``."""
    import torch

    torch.manual_seed(0)
    emb, lin = torch.nn.Embedding(512, 64), torch.nn.Linear(192 + 64 * use_token, 512)
    opt = torch.optim.Adam([*emb.parameters(), *lin.parameters()], lr=3e-3, weight_decay=1e-5)

    def logits(h, y):
        return lin(torch.cat([h, emb(y)], 1) if use_token else h)

    h, y, target = (torch.tensor(train[j]) for j in (0, 1, label))
    gen = torch.Generator().manual_seed(0)
    for _ in range(steps):
        idx = torch.randint(0, h.shape[0], (4096,), generator=gen)
        loss = torch.nn.functional.cross_entropy(logits(h[idx], y[idx]), target[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()

    def accuracy(part) -> float:
        guess = logits(torch.tensor(part[0]), torch.tensor(part[1])).argmax(1)
        return float((guess == torch.tensor(part[label])).float().mean())

    with torch.no_grad():
        return accuracy(train), accuracy(held_out)


def draft_accuracy(seqs) -> tuple[float, float]:
    """The shipped draft's first guess after x_{..i+1} right; its first two right."""
    draft, _ = load_pair(DRAFT_PAIR)
    first, both = [], []
    for seq in seqs:
        for i in range(CTX - 1, seq.size - 3):
            guess, _ = draft.guesses(list(seq[: i + 2]), 2)
            first.append(guess[0] == seq[i + 2])
            both.append(first[-1] and guess[1] == seq[i + 3])
    return float(np.mean(first)), float(np.mean(both))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", type=int, default=700, help="training continuations")
    ap.add_argument("--held-out", type=int, default=120, help="held-out continuations")
    args = ap.parse_args()
    limit_blas_threads(1)
    rng = np.random.default_rng(0)
    target = _gpt("target")
    validation = np.array(load_tokenizer().encode(load_corpus().validation_text[:200_000]))
    train = positions(target, np.asarray(corpus_token_ids()), args.train, rng)
    held = positions(target, validation, args.held_out, rng)
    print(f"positions: {train[0].shape[0]:,} training, {held[0].shape[0]:,} held-out")
    for name, label, use_token in [
        ("x_i+2 from (h_i, y)", 2, True),
        ("x_i+2 from h_i", 2, False),
        ("x_i+3 from (h_i, y)", 3, True),
    ]:
        tr, va = head_accuracy(train, held, label, use_token)
        print(f"head {name}: training {tr:.3f}, held-out {va:.3f}")
    first, both = draft_accuracy(held[4])
    print(f"{DRAFT_PAIR} draft: first guess {first:.3f}, first two {both:.3f} (held-out)")


if __name__ == "__main__":
    main()
