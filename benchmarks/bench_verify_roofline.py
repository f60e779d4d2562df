"""Why the verify is not free on this CPU: matrix products of m rows, and v(K) by model size.

Speculative decoding pays when checking K + 1 tokens costs about one plain step (v(K) near
1): on a GPU a step is bound by reading the weights, so a few more rows are almost free.
This script measures how far that holds for numpy's BLAS on the machine it runs on.

1. One matrix product of the target's largest shape (192 x 768, float32): m = 1, 4 and 8
   rows, with the weights hot (one matrix, it stays in the core's L2 cache), in the last
   level cache (a set as large as the 4-layer target, 7 MB) and in main memory (64 MB).
2. v(K) = (target call on K + 1 tokens) / (call on 1 token) for the shipped 4-layer GPT
   and for the same GPT with its MLP made 2, 4 and 8 times wider (extra weights random:
   the values do not change the time). A model too large for the cache is closer to the
   memory-bound case of the papers.
3. What the issue-12 goal (median 1.3x at K = 3) asks of a free draft (c = 0.03, prompt
   lookup's cost) at the measured v(3): tokens per round E = 1.3 (K c + v(3)), and the
   i.i.d. acceptance rate alpha with E(alpha, 3) = E (seed 003, Ex 7).

Per-thread CPU time, interleaved repeats, medians; the load average is printed.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_verify_roofline.py [--repeats N]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specdec_core.lm.blas import limit_blas_threads  # noqa: E402
from specdec_core.lm.gpt import GPTModel  # noqa: E402
from specdec_core.theory import expected_tokens  # noqa: E402

TARGET = ROOT / "specdec_core" / "lm" / "assets" / "gpt_target.npz"
SHAPE = (192, 768)  # the target's MLP matrix, its largest
SETS_MB = {"hot (L2)": 0.0, "cache (7 MB)": 7.0, "memory (64 MB)": 64.0}
MLP_WIDTHS = (768, 1536, 3072, 6144)  # 768 = the shipped target (4 x 192)
CONTEXT = 100  # cached tokens before each call
FREE_DRAFT_C = 0.03  # prompt lookup's measured c (benchmarks/results_model_pairs.md)
GOAL = 1.3
K_GOAL = 3


def _cpu_us(fn, calls: int) -> float:
    """Per-thread CPU microseconds of one call of fn, over ``calls`` calls."""
    t0 = time.thread_time_ns()
    for _ in range(calls):
        fn()
    return (time.thread_time_ns() - t0) / calls / 1e3


def matmul_table(repeats: int, rng: np.random.Generator) -> list[str]:
    """Microseconds of x @ W for m = 1, 4, 8 rows, per weight set size."""
    lines = [
        "| weights | m = 1 (us) | m = 4 (us) | m = 8 (us) | 4 rows / 1 row | 8 rows / 1 row |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    mb_each = SHAPE[0] * SHAPE[1] * 4 / 1e6
    for label, mb in SETS_MB.items():
        mats = [
            rng.standard_normal(SHAPE).astype(np.float32)
            for _ in range(max(1, round(mb / mb_each)))
        ]
        rows = {m: rng.standard_normal((m, SHAPE[0])).astype(np.float32) for m in (1, 4, 8)}
        calls = max(3, 600 // len(mats))
        times: dict[int, list[float]] = {m: [] for m in rows}
        for _ in range(repeats):
            for m, x in rows.items():
                times[m].append(
                    _cpu_us(lambda x=x, ws=mats: [x @ w for w in ws], calls) / len(mats)
                )
        med = {m: statistics.median(t) for m, t in times.items()}
        lines.append(
            f"| {label} | {med[1]:.1f} | {med[4]:.1f} | {med[8]:.1f} | "
            f"{med[4] / med[1]:.2f} | {med[8] / med[1]:.2f} |"
        )
    return lines


def widened(arrays: dict[str, np.ndarray], hidden: int, rng: np.random.Generator) -> dict:
    """The target's arrays with every MLP widened to ``hidden`` units (extra ones random)."""
    cfg = json.loads(str(arrays["config"]))
    out = {k: v.astype(np.float32) for k, v in arrays.items() if k != "config"}
    extra = hidden - 4 * cfg["dim"]
    for i in range(cfg["layers"]):
        fc, proj = out[f"h{i}_fc_w"], out[f"h{i}_out_w"]  # (d, 4d), (4d, d)
        noise_fc = 0.02 * rng.standard_normal((fc.shape[0], extra), dtype=np.float32)
        noise_out = 0.02 * rng.standard_normal((extra, proj.shape[1]), dtype=np.float32)
        out[f"h{i}_fc_w"] = np.concatenate([fc, noise_fc], axis=1)
        out[f"h{i}_fc_b"] = np.concatenate([out[f"h{i}_fc_b"], np.zeros(extra, np.float32)])
        out[f"h{i}_out_w"] = np.concatenate([proj, noise_out], axis=0)
    out["config"] = arrays["config"]
    return out


def model_table(repeats: int, rng: np.random.Generator) -> tuple[list[str], float]:
    """Plain step and v(K) for K = 1, 3, 7 per MLP width; also the shipped model's v(3)."""
    with np.load(TARGET) as data:
        arrays = {k: data[k] for k in data.files}
    models = {h: GPTModel(widened(arrays, h, rng) if h != 768 else arrays) for h in MLP_WIDTHS}
    tokens = {m: rng.integers(0, 512, m) for m in (1, 2, 4, 8)}
    prompt = rng.integers(0, 512, CONTEXT)
    times: dict[tuple[int, int], list[float]] = {}
    for model in models.values():
        model.extend(prompt)
    for _ in range(repeats):
        for h, model in models.items():
            for m, ids in tokens.items():

                def call(model=model, ids=ids):
                    model.extend(ids).argmax(axis=1)
                    model.rollback(CONTEXT)

                times.setdefault((h, m), []).append(_cpu_us(call, 10))
    lines = [
        "| MLP width | weights (MB, float32) | plain step (us) | v(1) | v(3) | v(7) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    v3_shipped = 0.0
    for h, model in models.items():
        mb = sum(a.nbytes for b in model.blocks for a in b.arrays()) + model.head_w.nbytes
        med = {m: statistics.median(times[(h, m)]) for m in tokens}
        v = {m - 1: med[m] / med[1] for m in (2, 4, 8)}
        name = f"{h} (shipped)" if h == 768 else f"{h} ({h // 768}x)"
        lines.append(
            f"| {name} | {mb / 1e6:.0f} | {med[1]:.0f} | {v[1]:.2f} | {v[3]:.2f} | {v[7]:.2f} |"
        )
        if h == 768:
            v3_shipped = v[3]
    return lines, v3_shipped


def alpha_for(tokens_per_round: float, k: int) -> float:
    """The alpha with E(alpha, k) = tokens_per_round (bisection; E rises with alpha)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected_tokens(mid, k) < tokens_per_round else (lo, mid)
    return (lo + hi) / 2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    limit_blas_threads(1)
    rng = np.random.default_rng(0)
    load0 = os.getloadavg()[0]
    print("## One matrix product (192 x 768, float32), m rows\n")
    print("\n".join(matmul_table(args.repeats, rng)))
    print("\n## v(K) of the 4-layer GPT, by MLP width (context of 100 tokens)\n")
    lines, v3 = model_table(args.repeats, rng)
    print("\n".join(lines))
    need_e = GOAL * (K_GOAL * FREE_DRAFT_C + v3)
    print(
        f"\n## What a {GOAL}x median at K = {K_GOAL} asks of a free draft (c = {FREE_DRAFT_C})\n"
        f"\nAt the shipped target's v({K_GOAL}) = {v3:.2f}: E = {GOAL} x ({K_GOAL} x "
        f"{FREE_DRAFT_C} + {v3:.2f}) = {need_e:.2f} tokens per round, i.e. alpha = "
        f"{alpha_for(need_e, K_GOAL):.2f} in the i.i.d. model"
        + (" (more than K + 1: out of reach)" if need_e > K_GOAL + 1 else "")
        + ". The best free draft's held-out alpha at T = 0 is 0.566 (tools/README.md)."
    )
    print(f"\nLoad average {load0:.1f} -> {os.getloadavg()[0]:.1f}; {os.cpu_count()} CPUs.")


if __name__ == "__main__":
    main()
