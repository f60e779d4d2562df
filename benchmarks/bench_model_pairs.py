"""Benchmark the model pairs: acceptance, calls, verify cost, measured vs predicted speedup.

For every shipped pair, K = 1..8 and temperature 0 and 1: 200 new tokens after a fixed
prompt, ``--repeats`` interleaved repeats (each repeat runs every K, each speculative run
followed by a plain run of the same target on the same prompt). Medians of the timed
quantities; acceptance rate and tokens per round are pooled over the repeats. Also the
load time of each pair (a fresh process each) and the peak memory of a process that
imports what the app imports and loads every pair.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_model_pairs.py [--repeats 5] [--out FILE]

Columns: alpha = drafted tokens kept / drafted tokens checked; tok/round = tokens per
round; calls = target calls for 200 tokens (plain decoding: 200); c = draft step / target
step; v(K) = one verify (the K+1-token target call and the accept / reject decisions) /
one plain target step; measured = plain decode
time / speculative decode time (prefill excluded from both); seed = E(alpha, K)/(K c + 1);
corrected = E(alpha, K)/(K c + v(K)); err = corrected / measured - 1.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specdec_core.lm import (  # noqa: E402
    autoregressive_generate,
    available_pairs,
    cost_model,
    encode_prompt,
    load_pair,
    load_tokenizer,
    speculative_generate,
)
from specdec_core.theory import speedup, time_per_token  # noqa: E402

# The page's default prompt. At T = 0 these tiny models fall into loops (blank lines,
# repeated phrases) and alpha depends a lot on the prompt: pass --prompt to try others.
PROMPT = "Return the number of"
N_TOKENS = 200
KS = range(1, 9)

LOAD_SNIPPET = """
import time, sys
t = time.perf_counter()
from specdec_core.lm import load_pair
load_pair(sys.argv[1])
print(time.perf_counter() - t)
"""

MEMORY_SNIPPET = """
import resource
import numpy as np, pandas, plotly.graph_objects, scipy.stats, streamlit  # what the app imports
import specdec_ui.figures_lm, specdec_ui.widgets
from specdec_core.lm import available_pairs, load_pair, encode_prompt, load_tokenizer
from specdec_core.lm import speculative_generate
ids = encode_prompt(load_tokenizer(), "The for statement is used to")
for name in available_pairs():
    d, t = load_pair(name)
    speculative_generate(d, t, ids, k=4, max_new_tokens=200, temperature=1.0,
                         rng=np.random.default_rng(0))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def _subprocess(snippet: str, *args: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", snippet, *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=ROOT,
    )
    return float(out.stdout.strip().splitlines()[-1])


def bench_pair(name: str, repeats: int, temperature: float, prompt: str) -> list[dict]:
    draft, target = load_pair(name)
    ids = encode_prompt(load_tokenizer(), prompt)
    runs: dict[int, list] = {k: [] for k in KS}
    for r in range(repeats):
        for k in KS:
            spec = speculative_generate(
                draft,
                target,
                ids,
                k=k,
                max_new_tokens=N_TOKENS,
                temperature=temperature,
                rng=np.random.default_rng(r),
                trace=False,
            )
            plain = autoregressive_generate(
                target,
                ids,
                max_new_tokens=N_TOKENS,
                temperature=temperature,
                rng=np.random.default_rng(r),
            )
            runs[k].append((spec, plain))
    rows = []
    for k, pairs in runs.items():
        costs = [cost_model(s, p) for s, p in pairs]
        accepted = sum(s.accepted for s, _ in pairs)
        checked = sum(s.checked for s, _ in pairs)
        alpha = accepted / checked if checked else 0.0
        c = statistics.median(m.c for m in costs)
        v = statistics.median(m.v for m in costs)
        measured = statistics.median(m.measured_speedup for m in costs)
        corrected = 1.0 / float(time_per_token(alpha, k, c, v))  # E / (K c + v)
        rows.append(
            {
                "pair": name,
                "T": temperature,
                "K": k,
                "alpha": alpha,
                "tok/round": statistics.fmean(s.tokens_per_round for s, _ in pairs),
                "calls": statistics.median(s.target_calls for s, _ in pairs),
                "c": c,
                "v(K)": v,
                "measured": measured,
                "seed": float(speedup(alpha, k, c, 1.0)),
                "corrected": corrected,
                "err": corrected / measured - 1.0,
                "identical": all(s.tokens == p.tokens for s, p in pairs),
                "step_us": statistics.median(m.target_step for m in costs) * 1e6,
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    head = (
        "| pair | T | K | alpha | tok/round | target calls | c | v(K) | measured | seed "
        "formula | corrected | err | same output |"
    )
    lines = [head, "|" + "---|" * 13]
    for r in rows:
        same = ("yes" if r["identical"] else "NO") if r["T"] == 0 else "n/a"
        lines.append(
            f"| {r['pair']} | {r['T']:g} | {r['K']} | {r['alpha']:.2f} | {r['tok/round']:.2f} | "
            f"{r['calls']:.0f} | {r['c']:.3f} | {r['v(K)']:.2f} | {r['measured']:.2f}x | "
            f"{r['seed']:.2f}x | {r['corrected']:.2f}x | {r['err']:+.0%} | {same} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--prompt", default=PROMPT)
    ap.add_argument("--pairs", nargs="*", default=None)
    ap.add_argument("--out", default=None, help="also write the tables (markdown) here")
    args = ap.parse_args()
    names = args.pairs or available_pairs()
    start = time.perf_counter()
    parts = [
        f"Machine: {os.cpu_count()} CPUs, OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}, numpy {np.__version__}; "
        f"{N_TOKENS} tokens after the prompt {args.prompt!r}; medians of {args.repeats} "
        f"interleaved repeats (repeat r samples with seed r); load average at the start "
        f"{os.getloadavg()[0]:.1f}."
    ]
    loads = [(n, _subprocess(LOAD_SNIPPET, n)) for n in names]
    parts.append(
        "| pair | load time (fresh process) |\n|---|---|\n"
        + "\n".join(f"| {n} | {t:.2f} s |" for n, t in loads)
    )
    parts.append(
        f"Peak memory (RSS) of a process with the app's imports and every pair "
        f"loaded and run: {_subprocess(MEMORY_SNIPPET):.0f} MB"
    )
    rows = []
    for name in names:
        for temperature in (0.0, 1.0):
            rows.extend(bench_pair(name, args.repeats, temperature, args.prompt))
    parts.append(table(rows))
    best = max((r for r in rows if r["T"] == 0), key=lambda r: r["measured"])
    worst = max(rows, key=lambda r: abs(r["err"]))
    within = sum(abs(r["err"]) <= 0.15 for r in rows)
    parts.append(
        f"Best at T = 0: {best['pair']} K = {best['K']}: {best['measured']:.2f}x measured "
        f"(same output: {best['identical']}); target step {best['step_us']:.0f} us. "
        f"Corrected prediction within 15 % of the measurement in {within} of {len(rows)} rows "
        f"(worst: {worst['pair']} T = {worst['T']:g} K = {worst['K']}, {worst['err']:+.0%}). "
        f"Benchmark took {time.perf_counter() - start:.0f} s."
    )
    text = "\n\n".join(parts)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
