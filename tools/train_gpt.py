"""Train a tiny decoder-only GPT on the corpus with torch (CPU) and export it to .npz.

Architecture (mirrored exactly by ``specdec_core.lm.gpt``): learned token and position
embeddings, ``n_layer`` pre-LayerNorm blocks (causal multi-head attention with a fused
qkv projection, then an MLP 4d with tanh-GELU), a final LayerNorm and the output
projection tied to the token embedding. No dropout (it made CPU training ~5x slower).

Reproducible: ``torch.manual_seed(seed)`` for the initialisation and a seeded generator
for the batches; fixed step count; AdamW, linear warm-up then cosine decay.
A checkpoint (.npz, float16) is exported at every evaluation, so a stopped run still
leaves usable weights. Example (see tools/README.md for the exact commands):

    python tools/train_gpt.py --name target --layers 4 --dim 192 --heads 6 --steps 1200
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specdec_core.lm.corpus import ASSETS, load_corpus  # noqa: E402
from specdec_core.lm.tokenizer import Tokenizer  # noqa: E402


class Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab: int, ctx: int, layers: int, d: int, heads: int) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.lnf = nn.LayerNorm(d)
        self.apply(self._init)
        for blk in self.blocks:  # GPT-2's scaled init of residual projections
            for lin in (blk.proj, blk.out):
                nn.init.normal_(lin.weight, std=0.02 / math.sqrt(2 * layers))

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t))
        for blk in self.blocks:
            x = blk(x)
        return self.lnf(x) @ self.wte.weight.T


def export(model: GPT, cfg: dict, path: Path) -> None:
    """Weights as float16, laid out for ``x @ W`` (numpy side), plus the config as JSON."""
    arrays = {
        "wte": model.wte.weight,
        "wpe": model.wpe.weight,
        "lnf_g": model.lnf.weight,
        "lnf_b": model.lnf.bias,
    }
    for i, blk in enumerate(model.blocks):
        for name, lin in (("qkv", blk.qkv), ("proj", blk.proj), ("fc", blk.fc), ("out", blk.out)):
            arrays[f"h{i}_{name}_w"] = lin.weight.T
            arrays[f"h{i}_{name}_b"] = lin.bias
        for name, ln in (("ln1", blk.ln1), ("ln2", blk.ln2)):
            arrays[f"h{i}_{name}_g"] = ln.weight
            arrays[f"h{i}_{name}_b"] = ln.bias
    out = {k: v.detach().cpu().numpy().astype(np.float16) for k, v in arrays.items()}
    out["config"] = np.array(json.dumps(cfg))
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **out)
    tmp.replace(path)


def windows(ids: torch.Tensor, n: int, ctx: int, gen: torch.Generator) -> torch.Tensor:
    starts = torch.randint(0, ids.numel() - ctx - 1, (n,), generator=gen)
    return torch.stack([ids[s : s + ctx + 1] for s in starts.tolist()])


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--dim", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=100)
    return ap.parse_args()


def optimizer(model: GPT, lr: float) -> torch.optim.AdamW:
    """AdamW, weight decay 0.1 on matrices only (not on biases, gains, embeddings' rows)."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
        betas=(0.9, 0.95),
    )


def learning_rate(step: int, args: argparse.Namespace) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine decay to 10 % at ``steps``."""
    cosine = 0.5 * (1 + math.cos(math.pi * min(1.0, step / args.steps)))
    return args.lr * min(1.0, step / args.warmup) * (0.1 + 0.9 * cosine)


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed + 1)
    tok = Tokenizer.load(ASSETS / "tokenizer.json")
    corpus = load_corpus()
    train = torch.tensor(tok.encode(corpus.train_text), dtype=torch.long)
    val = torch.tensor(tok.encode(corpus.validation_text), dtype=torch.long)
    val_batch = windows(val, 32, args.ctx, torch.Generator().manual_seed(12345))
    cfg = {"vocab": tok.vocab_size, "ctx": args.ctx, "layers": args.layers, "dim": args.dim}
    cfg |= {"heads": args.heads, "seed": args.seed, "steps": args.steps}
    cfg |= {"batch": args.batch, "lr": args.lr}
    model = GPT(tok.vocab_size, args.ctx, args.layers, args.dim, args.heads)
    opt = optimizer(model, args.lr)
    out_path = ASSETS / f"gpt_{args.name}.npz"
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{args.name}: {n_params:,} parameters, {train.numel():,} train tokens", flush=True)
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        for g in opt.param_groups:
            g["lr"] = learning_rate(step, args)
        batch = windows(train, args.batch, args.ctx, gen)
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % args.eval_every == 0 or step == args.steps:
            val_loss = evaluate(model, val_batch)
            cfg.update(trained_steps=step, val_loss=round(val_loss, 4))
            cfg.update(train_seconds=round(time.perf_counter() - start, 1))
            export(model, cfg, out_path)
            print(f"step {step} loss {loss.item():.3f} val {val_loss:.3f}", flush=True)
    print(f"done in {time.perf_counter() - start:.0f} s -> {out_path}", flush=True)


def evaluate(model: GPT, val_batch: torch.Tensor) -> float:
    """Mean cross-entropy (nats per token) on the fixed validation windows."""
    model.eval()
    with torch.no_grad():
        logits = model(val_batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), val_batch[:, 1:].reshape(-1))
    model.train()
    return float(loss)


if __name__ == "__main__":
    main()
