"""The Serving lab's per-layer model against the H200 measured for this project.

Prints (no GPU needed: the measurements ship in specdec_core.serving_measured, checked
against benchmarks/gpu/*.json by tests/core/test_serving_measured.py):

1. per context and batch: the 8B step with 1 and 5 tokens per sequence, measured (the
   faster of the two attention kernels) and modelled, with the error; v(4) and the 1B
   draft's c both ways;
2. the linear layers alone (attention switched off in the measurement) against the model's
   linear layers, LM head and overhead: what the achieved shares of bandwidth and FLOP/s are;
3. a grid search of (bandwidth share, FLOP/s share, overhead) that minimises the RMS of the
   log error over every measured step (target and draft), beside the defaults.

Usage: python3 benchmarks/serving_model_vs_h200.py
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specdec_core import serving_measured as sm  # noqa: E402
from specdec_core.serving_cost import step_cost  # noqa: E402
from specdec_core.serving_hardware import H200  # noqa: E402
from specdec_core.serving_models import LLAMA_3_2_1B, TARGETS  # noqa: E402

LLAMA_8B = TARGETS["llama-3.1-8b"]
B = np.array(sm.BATCHES)


def per_batch_table() -> None:
    print("## 1. The 8B step on one H200: measured (faster kernel) and the model\n")
    print(
        "| context | batch | 1 token: measured / model (ms) | error | 5 tokens: measured / model "
        "(ms) | error | v(4) measured / model | c measured / model |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in sm.CONTEXTS:
        m1, p1 = sm.target_ms(1, n), sm.model_ms(1, n)
        m5, p5 = sm.target_ms(5, n), sm.model_ms(5, n)
        mv, pv = sm.measured_v(4, n), sm.model_v(4, n)
        mc, pc = sm.measured_c(n), sm.model_draft_ms(n) / p1
        for i, b in enumerate(sm.BATCHES):
            star = "" if sm.fits(b, n) else " *"
            e1 = 100 * (p1[i] / m1[i] - 1)
            print(
                f"| {n:,} | {b}{star} | {m1[i]:.2f} / {p1[i]:.2f} | {e1:+.0f}% "
                f"| {m5[i]:.2f} / {p5[i]:.2f} | {100 * (p5[i] / m5[i] - 1):+.0f}% "
                f"| {mv[i]:.2f} / {pv[i]:.2f} | {mc[i]:.3f} / {pc[i]:.3f} |"
            )
    print("\n\\* batch 256 at 4,096 tokens does not fit one H200 (KV slices reused to time it)\n")


def linear_only() -> None:
    print("## 2. The linear layers alone (context 1,024, attention off)\n")
    print(
        "| batch | tokens | measured (ms) | model: linear + head + overhead (ms) | error "
        "| measured rate |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    flops_per_token = 2 * LLAMA_8B.streamed_params
    for m in (1, 5):
        measured = np.minimum(
            np.array(sm.LINEAR_ONLY_MS[(sm.TWO, m)]), np.array(sm.LINEAR_ONLY_MS[(sm.SDPA, m)])
        )
        cost = step_cost(LLAMA_8B, H200, B, m, 1_024)
        model = 1e3 * (cost.linear_s + cost.head_s + cost.overhead_s)
        for i, b in enumerate(sm.BATCHES):
            tflops = flops_per_token * b * m / (measured[i] / 1e3) / 1e12
            tbs = LLAMA_8B.streamed_bytes / (measured[i] / 1e3) / 1e12
            rate = f"{tflops:.0f} TFLOP/s" if b * m >= 128 else f"{tbs:.2f} TB/s"
            print(
                f"| {b} | {m} | {measured[i]:.2f} | {model[i]:.2f} | "
                f"{100 * (model[i] / measured[i] - 1):+.0f}% | {rate} |"
            )
    print()


def _log_errors(bw: float, fl: float, ov: float) -> np.ndarray:
    hw = H200.with_overhead(ov).with_fractions(bw, fl)
    errors = []
    for n in sm.CONTEXTS:
        for m in sm.TOKENS:
            model = 1e3 * step_cost(LLAMA_8B, hw, B, m, n).total_s
            errors.append(np.log(model / sm.target_ms(m, n)))
        draft = 1e3 * step_cost(LLAMA_3_2_1B, hw, B, 1, n).total_s
        errors.append(np.log(draft / sm.draft_ms(n)))
    return np.concatenate(errors)


def fit() -> None:
    print("## 3. Shares and overhead that fit every measured step best\n")
    grid = itertools.product(
        np.arange(0.55, 0.951, 0.01), np.arange(0.30, 0.801, 0.02), np.arange(0.0, 1.5e-3, 5e-5)
    )
    best = min(grid, key=lambda p: float(np.sqrt(np.mean(_log_errors(*p) ** 2))))
    print(
        "| shares and overhead | bandwidth | FLOP/s | overhead (ms) | RMS log error | "
        "median abs error | max abs error |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    defaults = (H200.bw_fraction, H200.flops_fraction, H200.overhead_s)
    for name, (bw, fl, ov) in (("the defaults", defaults), ("best fit", best)):
        e = _log_errors(bw, fl, ov)
        rel = np.abs(np.expm1(e))
        print(
            f"| {name} | {bw:.2f} | {fl:.2f} | {1e3 * ov:.2f} | {np.sqrt(np.mean(e**2)):.3f} "
            f"| {100 * np.median(rel):.0f}% | {100 * rel.max():.0f}% |"
        )
    print(
        f"\n{len(_log_errors(*defaults))} measured steps (the 8B with 1-9 tokens per sequence "
        "at two contexts and 9 batches, the 1B draft)"
    )


def main() -> int:
    per_batch_table()
    linear_only()
    fit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
