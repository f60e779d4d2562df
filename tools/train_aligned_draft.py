"""Distil the 4-layer target into drafts that agree with it (issue 12), and measure alpha.

Sequence-level distillation (Kim & Rush 2016) with soft labels (Hinton et al. 2015), the
recipe of DistillSpec (Zhou et al. 2024) for speculative decoding:

1. Generate text with the shipped 4-layer target from contexts of the *training* split:
   half greedy (T = 0), half sampled (T = 1); the numpy model with its KV cache does this
   fast on a CPU. The token ids are kept (``assets/target_samples.npz``).
2. Teacher soft labels: the target's next-token distribution p at every position of
   those sequences (torch, one batched forward, no gradients).
3. The 1-layer GPT draft, initialised from the shipped draft, is trained to minimise
   KL(p || q) = sum_x p(x) (log p(x) - log q(x)), averaged over positions.
4. A trigram (Witten-Bell, :class:`specdec_core.lm.NGramModel`) is fitted to the target's
   samples plus the training corpus: it is rebuilt at load time from the shipped ids.

Alpha, before and after, on target continuations of *validation* contexts (held out,
and not the benchmark's prompts): at T = 0 the fraction of positions where the draft's
argmax equals the target's; at T = 1 the mean of sum_x min(p, q) (Leviathan et al.
2023, Cor. 3.6: the expected acceptance rate). The SHA-256 of every written file is
printed for ``specdec_core/lm/pairs.py``. Command, seed and time: tools/README.md.

    nice -n 10 python tools/train_aligned_draft.py --seed 0 --threads 1
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from export_reference import torch_model  # noqa: E402
from train_gpt import export  # noqa: E402

from specdec_core.lm import NGramModel, autoregressive_generate, load_corpus  # noqa: E402
from specdec_core.lm.corpus import ASSETS  # noqa: E402
from specdec_core.lm.pairs import _gpt, corpus_token_ids, load_tokenizer  # noqa: E402

SAMPLES_FILE = ASSETS / "target_samples.npz"
DRAFT_FILE = ASSETS / "gpt_draft_aligned.npz"


def sample_sequences(ids: np.ndarray, n: int, gen: int, seed: int) -> list[np.ndarray]:
    """n sequences = a corpus context (8..40 tokens) + ``gen`` target tokens (<= 240 in all).

    Even-numbered sequences are greedy (T = 0), odd ones sampled at T = 1.
    """
    rng = np.random.default_rng(seed)
    target = _gpt("target")
    out = []
    for i in range(n):
        length = int(rng.integers(8, 41))
        start = int(rng.integers(0, ids.size - length))
        ctx = ids[start : start + length].tolist()
        temperature = 0.0 if i % 2 == 0 else 1.0
        res = autoregressive_generate(
            target, ctx, max_new_tokens=gen, temperature=temperature, rng=rng
        )
        out.append(np.array(ctx + res.tokens, dtype=np.int16))
        if (i + 1) % 50 == 0:
            print(f"  {i + 1}/{n} sequences", flush=True)
    return out


def soft_labels(teacher, seqs: list[np.ndarray]) -> list[torch.Tensor]:
    """log p of the teacher at every position but the last of each sequence, float16."""
    out = []
    with torch.no_grad():
        for s in seqs:
            logits = teacher(torch.tensor(s[:-1].astype(np.int64))[None])[0]
            out.append(F.log_softmax(logits, dim=-1).half())
    return out


def agreement(student_logits: torch.Tensor, teacher_logp: torch.Tensor) -> tuple[float, float]:
    """(argmax agreement, mean sum_x min(p, q)) over positions: alpha at T = 0 and T = 1."""
    q = F.softmax(student_logits, dim=-1)
    p = teacher_logp.float().exp()
    same = (student_logits.argmax(-1) == teacher_logp.argmax(-1)).float().mean()
    return float(same), float(torch.minimum(p, q).sum(-1).mean())


def evaluate_gpt(model, seqs, labels) -> dict[str, float]:
    """KL(p || q) and alpha at T = 0 / T = 1 of a torch GPT on held-out target text."""
    model.eval()
    kl, a0, a1 = [], [], []
    with torch.no_grad():
        for s, lp in zip(seqs, labels, strict=True):
            logits = model(torch.tensor(s[:-1].astype(np.int64))[None])[0]
            kl.append(float(kl_loss(logits, lp)))
            x0, x1 = agreement(logits, lp)
            a0.append(x0)
            a1.append(x1)
    model.train()
    return {"kl": np.mean(kl), "alpha_T0": np.mean(a0), "alpha_T1": np.mean(a1)}


def evaluate_ngram(model: NGramModel, seqs, labels) -> dict[str, float]:
    """Alpha at T = 0 / T = 1 of an n-gram model on the same held-out target text."""
    a0, a1 = [], []
    for s, lp in zip(seqs, labels, strict=True):
        rows = model.fresh().extend(s[:-1].astype(np.int64))  # (n, V) log q
        x0, x1 = agreement(torch.tensor(rows, dtype=torch.float32), lp)
        a0.append(x0)
        a1.append(x1)
    return {"alpha_T0": float(np.mean(a0)), "alpha_T1": float(np.mean(a1))}


def kl_loss(student_logits: torch.Tensor, teacher_logp: torch.Tensor) -> torch.Tensor:
    """Mean over positions of KL(p || q) = sum_x p(x) (log p(x) - log q(x))."""
    lq = F.log_softmax(student_logits, dim=-1)
    lp = teacher_logp.float()
    return (lp.exp() * (lp - lq)).sum(-1).mean()


def _batch(seqs, labels, pick):
    """Right-padded inputs (B, L), teacher log p (B, L, V) and a mask (B, L) of real positions."""
    n = max(seqs[i].size - 1 for i in pick)
    x = torch.zeros((len(pick), n), dtype=torch.long)
    lp = torch.zeros((len(pick), n, labels[pick[0]].shape[-1]))
    mask = torch.zeros((len(pick), n))
    for row, i in enumerate(pick):
        m = seqs[i].size - 1
        x[row, :m] = torch.tensor(seqs[i][:-1].astype(np.int64))
        lp[row, :m] = labels[i].float()
        mask[row, :m] = 1.0
    return x, lp, mask


def train_student(student, seqs, labels, steps: int, lr: float, batch: int, seed: int) -> None:
    """AdamW on the masked mean of KL(p || q), warm-up then cosine decay to 10 %."""
    gen = torch.Generator().manual_seed(seed + 1)
    opt = torch.optim.AdamW(student.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    for step in range(1, steps + 1):
        scale = min(1.0, step / 30) * (0.1 + 0.45 * (1 + math.cos(math.pi * step / steps)))
        for g in opt.param_groups:
            g["lr"] = lr * scale
        pick = torch.randint(0, len(seqs), (batch,), generator=gen).tolist()
        x, lp, mask = _batch(seqs, labels, pick)
        lq = F.log_softmax(student(x), dim=-1)  # (B, L, V)
        loss = ((lp.exp() * (lp - lq)).sum(-1) * mask).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        opt.step()
        if step % 100 == 0 or step == steps:
            print(f"step {step} KL {loss.item():.3f}", flush=True)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def report_trigrams(flat, train_ids, held, held_labels, vocab: int) -> None:
    """Alpha of trigrams fitted to the corpus, the samples, and both (samples x w)."""
    fits = {"corpus": train_ids, "target samples only": flat}
    for weight in (1, 2, 4, 8):
        fits[f"samples x{weight} + corpus"] = np.concatenate([*[flat] * weight, train_ids])
    for name, ids in fits.items():
        alpha = evaluate_ngram(NGramModel(ids, 3, vocab), held, held_labels)
        print(f"trigram ({name}) alpha: {alpha}", flush=True)


def distil_gpt(args, seqs, held, start: float) -> list[torch.Tensor]:
    """Soft labels from the target, KL training of the 1-layer draft, export (float16)."""
    teacher = torch_model(ASSETS / "gpt_target.npz")
    labels, held_labels = soft_labels(teacher, seqs), soft_labels(teacher, held)
    student = torch_model(ASSETS / "gpt_draft.npz")
    print(f"1-layer GPT before: {evaluate_gpt(student, held, held_labels)}", flush=True)
    train_student(student, seqs, labels, args.steps, args.lr, args.batch, args.seed)
    after = evaluate_gpt(student, held, held_labels)
    print(f"1-layer GPT after:  {after}", flush=True)
    cfg = {
        "vocab": student.wte.weight.shape[0],
        "ctx": 256,
        "layers": len(student.blocks),
        "dim": student.wte.weight.shape[1],
        "heads": student.blocks[0].heads,
        "seed": args.seed,
        "distilled_from": "gpt_target.npz",
        "steps": args.steps,
        "sequences": args.sequences,
        "held_out": {k: round(float(v), 4) for k, v in after.items()},
        "train_seconds": round(time.perf_counter() - start, 1),
    }
    export(student, cfg, DRAFT_FILE)
    return held_labels


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sequences", type=int, default=480)
    ap.add_argument("--gen", type=int, default=200)
    ap.add_argument("--held-out", type=int, default=40)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    start = time.perf_counter()
    tok = load_tokenizer()
    train_ids = corpus_token_ids()
    val_ids = np.asarray(tok.encode(load_corpus().validation_text), dtype=np.int32)
    seqs = sample_sequences(train_ids, args.sequences, args.gen, args.seed)
    flat = np.concatenate(seqs)  # saved at once: a stopped run still leaves the samples
    np.savez_compressed(SAMPLES_FILE, ids=flat, lengths=np.array([s.size for s in seqs]))
    held = sample_sequences(val_ids, args.held_out, args.gen, args.seed + 1000)
    n_train, n_held = sum(s.size for s in seqs), sum(s.size for s in held)
    print(f"sampled {n_train:,} + {n_held:,} tokens in {time.perf_counter() - start:.0f} s")
    held_labels = distil_gpt(args, seqs, held, start)
    report_trigrams(flat, train_ids, held, held_labels, tok.vocab_size)
    for path in (DRAFT_FILE, SAMPLES_FILE):
        print(f"{path.name} sha256 {sha256(path)}")
    print(f"done in {time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
