"""Benchmark the model pairs over a fixed prompt set: speedup per prompt and median.

The prompts are ``benchmarks/prompts_model_pairs.txt`` (12, chosen before any tuning:
6 held-out corpus openings, 6 typed the way a student would). For every pair, K and
temperature (0 and 1): ``N_TOKENS`` new tokens after each prompt, ``--repeats``
interleaved repeats (repeat r: every prompt, every temperature, one plain run of the
target, then every pair and K; repeat r samples with seed r). Medians over repeats per
prompt, then the median, the worst and the best over the prompts.

Fixed K = 1..4 runs beside the adaptive draft length (issue 20: K = "adaptive", at most
``ADAPTIVE_K`` drafts a round, :mod:`specdec_core.lm.adaptive`), priced by costs measured
on this machine at the start (:func:`specdec_core.lm.measure_costs`, per pair and
temperature; printed with the table, with the BLAS kernels in use).

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_model_pairs.py [--quick] [--out F]

Columns: alpha = drafted tokens kept / checked (pooled); tok/round; c = draft call /
target step; v(K) = one verify (the K+1-token target call + the decisions) / one plain
step; median / best = plain decode time / speculative decode time over the prompts
(wall clock; prefill excluded); cpu = the same ratio in per-thread CPU time
(time.thread_time, which other processes do not inflate as much), worst (CPU) = the
lowest prompt's; priced = the same runs priced by the measured costs instead of clocked
(tokens / (c x draft calls + sum of v(n) over rounds), no clock: the choices of the
rounds judged by the prices the adaptive rule was given, free of the machine's noise
during the runs); drafts = mean drafts per round; corrected =
E / (K c + v(K)) per prompt (E averaged over rounds for a draft that proposes 0..K),
err = median over prompts of corrected / measured - 1, worst = the largest |err| of a
prompt; same = every T = 0 output equals the target's greedy output.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported

import argparse  # noqa: E402
import statistics  # noqa: E402
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
    measure_costs,
    speculative_generate,
)
from specdec_core.lm.blas import blas_kernel  # noqa: E402

PROMPTS_FILE = ROOT / "benchmarks" / "prompts_model_pairs.txt"
N_TOKENS = 200
FULL = {
    "pairs": [
        "lookup-table-to-gpt-4L",
        "lookup-to-gpt-4L",
        "trigram-aligned-to-gpt-4L",
        "gpt-1L-aligned-to-gpt-4L",
        "trigram-to-gpt-4L",
        "gpt-1L-to-gpt-4L",
    ],
    "ks": [1, 2, 3, 4],
    "repeats": 3,
    "tokens": N_TOKENS,
}
QUICK = {
    "pairs": ["lookup-table-to-gpt-4L"],
    "ks": [3],
    "repeats": 1,
    "tokens": 100,
}
ADAPTIVE = "adaptive"  # the K column of the adaptive runs
ADAPTIVE_K = 8  # the most an adaptive round may draft


def read_prompts(path: Path = PROMPTS_FILE) -> list[tuple[str, str]]:
    """(source, text) per line of the prompt file; '#' lines are comments."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            source, text = line.split("\t", 1)
            out.append((source, text.replace("\\n", "\n")))
    return out


def measure_all_costs(pairs) -> dict:
    """costs[(pair, T)]: this machine's c and v(0..ADAPTIVE_K), measured once per pair and T."""
    return {
        (name, t): measure_costs(name, ADAPTIVE_K, temperature=t)
        for name in pairs
        for t in (0.0, 1.0)
    }


def run_all(pairs, ks, repeats, tokens, prompts, costs) -> dict:
    """runs[(pair, T, K, prompt)] = [(spec, plain), ...], one per repeat (interleaved).

    K is a fixed K or ADAPTIVE (at most ADAPTIVE_K drafts, priced by ``costs``).
    """
    tok = load_tokenizer()
    ids = [encode_prompt(tok, text) for _, text in prompts]
    models = {name: load_pair(name) for name in pairs}
    target = next(iter(models.values()))[1]
    runs: dict = {}
    for r in range(repeats):
        for pi, prompt in enumerate(ids):
            for t in (0.0, 1.0):
                plain = autoregressive_generate(
                    target, prompt, max_new_tokens=tokens, temperature=t,
                    rng=np.random.default_rng(r),
                )  # fmt: skip
                for name, (draft, tgt) in models.items():
                    for k in [*ks, ADAPTIVE]:
                        how = {"k": k} if k != ADAPTIVE else {
                            "k": ADAPTIVE_K, "adaptive": costs[(name, t)]
                        }  # fmt: skip
                        spec = speculative_generate(
                            draft, tgt, prompt, max_new_tokens=tokens, temperature=t,
                            rng=np.random.default_rng(r), trace=False, **how,
                        )  # fmt: skip
                        runs.setdefault((name, t, k, pi), []).append((spec, plain))
        print(f"repeat {r + 1}/{repeats} done, load {os.getloadavg()[0]:.1f}", flush=True)
    return runs


def priced(spec, profile) -> float:
    """Speedup priced by the measured costs instead of clocked: tokens emitted / (c x draft
    calls + sum of v(n) over the rounds), in plain steps (a plain step emits one token).

    No clock is read, so the machine's noise during the runs does not enter: it judges
    the rounds' choices by the prices the adaptive rule was given.
    """
    cost = profile.draft * spec.draft_calls + sum(profile.verify[n] for n in spec.draft_sizes)
    return spec.emitted / cost


def prompt_row(pairs_runs, profile) -> dict:
    """Medians over the repeats of one (pair, T, K, prompt)."""
    costs = [cost_model(s, p) for s, p in pairs_runs]
    med = statistics.median
    return {
        "priced": med(priced(s, profile) for s, _ in pairs_runs),
        "measured": med(m.measured_speedup for m in costs),
        "cpu": med(p.cpu_total / s.cpu_total for s, p in pairs_runs),
        "corrected": med(m.corrected_prediction for m in costs),
        "c": med(m.c for m in costs),
        "v": med(m.v for m in costs),
        "step_us": med(m.target_step for m in costs) * 1e6,
        "accepted": sum(s.accepted for s, _ in pairs_runs),
        "checked": sum(s.checked for s, _ in pairs_runs),
        "tpr": statistics.fmean(s.tokens_per_round for s, _ in pairs_runs),
        "empty": statistics.fmean(s.empty_rounds / s.n_rounds for s, _ in pairs_runs),
        "drafts": statistics.fmean(s.drafted / s.n_rounds for s, _ in pairs_runs),
        "same": all(s.tokens == p.tokens for s, p in pairs_runs),
    }


def summarise(runs: dict, pairs, ks, n_prompts: int, profiles: dict) -> list[dict]:
    """One row per (pair, T, K): medians and best over the prompts."""
    rows = []
    for name in pairs:
        for t in (0.0, 1.0):
            for k in [*ks, ADAPTIVE]:
                per = [
                    prompt_row(runs[(name, t, k, i)], profiles[(name, t)]) for i in range(n_prompts)
                ]
                errs = [p["corrected"] / p["measured"] - 1 for p in per]
                checked = sum(p["checked"] for p in per)
                rows.append(
                    {
                        "pair": name,
                        "T": t,
                        "K": k,
                        "per_prompt": per,
                        "alpha": sum(p["accepted"] for p in per) / checked if checked else 0.0,
                        "tpr": statistics.median(p["tpr"] for p in per),
                        "c": statistics.median(p["c"] for p in per),
                        "v": statistics.median(p["v"] for p in per),
                        "median": statistics.median(p["measured"] for p in per),
                        "best": max(p["measured"] for p in per),
                        "cpu": statistics.median(p["cpu"] for p in per),
                        "worst_cpu": min(p["cpu"] for p in per),
                        "priced": statistics.median(p["priced"] for p in per),
                        "worst_priced": min(p["priced"] for p in per),
                        "drafts": statistics.median(p["drafts"] for p in per),
                        "corrected": statistics.median(p["corrected"] for p in per),
                        "err": statistics.median(errs),
                        "worst": max(errs, key=abs),
                        "same": all(p["same"] for p in per) if t == 0 else None,
                        "step_us": statistics.median(p["step_us"] for p in per),
                    }
                )
    return rows


def summary_table(rows) -> str:
    head = (
        "| pair | T | K | drafts | alpha | tok/round | c | v(K) | median | best prompt "
        "| median (CPU) | worst (CPU) | priced | corrected | err | worst prompt err | same |"
    )
    lines = [head, "|" + "---|" * 17]
    for r in rows:
        same = "n/a" if r["same"] is None else ("yes" if r["same"] else "NO")
        k = f"adaptive <= {ADAPTIVE_K}" if r["K"] == ADAPTIVE else r["K"]
        lines.append(
            f"| {r['pair']} | {r['T']:g} | {k} | {r['drafts']:.2f} | {r['alpha']:.2f} | "
            f"{r['tpr']:.2f} | {r['c']:.3f} | {r['v']:.2f} | {r['median']:.2f}x | "
            f"{r['best']:.2f}x | {r['cpu']:.2f}x | {r['worst_cpu']:.2f}x | {r['priced']:.2f}x | "
            f"{r['corrected']:.2f}x | {r['err']:+.0%} | {r['worst']:+.0%} | {same} |"
        )
    return "\n".join(lines)


def costs_table(costs: dict) -> str:
    """The measured costs that priced the adaptive runs: c, v(0..K) and the BLAS kernels."""
    ks = range(ADAPTIVE_K + 1)
    lines = [
        f"Costs measured here (per-thread CPU time, interleaved, medians; BLAS kernels: "
        f"{blas_kernel()}), in plain target steps:",
        "",
        "| pair | T | step (us) | c | " + " | ".join(f"v({k})" for k in ks) + " |",
        "|" + "---|" * (4 + len(ks)),
    ]
    for (name, t), c in costs.items():
        lines.append(
            f"| {name} | {t:g} | {c.step_s * 1e6:.0f} | {c.draft:.3f} | "
            + " | ".join(f"{v:.2f}" for v in c.verify)
            + " |"
        )
    return "\n".join(lines)


def prompt_table(row, prompts) -> str:
    """Per-prompt numbers of one (pair, T, K) row."""
    lines = [
        f"Per prompt: {row['pair']}, T = {row['T']:g}, K = {row['K']}",
        "",
        "| prompt | source | alpha | drafts | tok/round | no-draft rounds | measured | CPU "
        "| corrected |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (source, text), p in zip(prompts, row["per_prompt"], strict=True):
        alpha = p["accepted"] / p["checked"] if p["checked"] else 0.0
        shown = text.replace("\n", "\\n").replace("|", "\\|")[:48]
        lines.append(
            f"| `{shown}` | {source} | {alpha:.2f} | {p['drafts']:.2f} | {p['tpr']:.2f} | "
            f"{p['empty']:.0%} | "
            f"{p['measured']:.2f}x | {p['cpu']:.2f}x | {p['corrected']:.2f}x |"
        )
    return "\n".join(lines)


def goals(rows) -> str:
    """Issue 20's goals, per pair and temperature, in per-thread CPU time."""
    lines = [
        "Adaptive against fixed K (medians over the prompts; CPU = clocked in per-thread CPU "
        "time, priced = by the measured costs, no clock): goal 1, adaptive >= the best fixed "
        "K; goal 2 (T = 0), no prompt below 0.95x of plain decoding.",
        "",
        "| pair | T | best fixed K (CPU) | its median | adaptive median | goal 1 | adaptive "
        "worst prompt | goal 2 | best fixed K (priced) | adaptive (priced) | worst (priced) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in dict.fromkeys(r["pair"] for r in rows):
        for t in (0.0, 1.0):
            mine = [r for r in rows if r["pair"] == name and r["T"] == t]
            ada = next(r for r in mine if r["K"] == ADAPTIVE)
            best = max((r for r in mine if r["K"] != ADAPTIVE), key=lambda r: r["cpu"])
            ok2 = ("met" if ada["worst_cpu"] >= 0.95 else "missed") if t == 0 else "n/a"
            best_p = max((r for r in mine if r["K"] != ADAPTIVE), key=lambda r: r["priced"])
            lines.append(
                f"| {name} | {t:g} | {best['K']} | {best['cpu']:.2f}x | {ada['cpu']:.2f}x | "
                f"{'met' if ada['cpu'] >= best['cpu'] else 'missed'} | {ada['worst_cpu']:.2f}x "
                f"| {ok2} | K = {best_p['K']}: {best_p['priced']:.2f}x | {ada['priced']:.2f}x "
                f"| {ada['worst_priced']:.2f}x |"
            )
    return "\n".join(lines)


def verify_cost(repeats: int = 300) -> str:
    """v(K) = CPU time of one verify / one plain step, K = 1..8, by per-thread CPU time.

    Verify = the target call on K+1 tokens + the T = 0 decision (argmax per row); plain
    step = the call on 1 token + its argmax. Interleaved, median of ``repeats`` each,
    after a 40-token context; the same measurement runs on an older checkout of the
    package to give the "before" column.
    """
    _, target = load_pair("trigram-to-gpt-4L")
    runner = target.fresh()
    runner.extend(list(range(40)))
    times: dict[int, list[float]] = {m: [] for m in range(1, 10)}
    for _ in range(repeats):
        for m in times:
            t0 = time.thread_time_ns()
            runner.extend(list(range(m))).argmax(axis=1)
            times[m].append(time.thread_time_ns() - t0)
            runner.rollback(40)
    step = statistics.median(times[1])
    lines = [f"plain step {step / 1e3:.0f} us (CPU); load {os.getloadavg()[0]:.1f}", ""]
    lines += ["| K | verify (us, CPU) | v(K) |", "|---|---|---|"]
    for m in range(2, 10):
        med = statistics.median(times[m])
        lines.append(f"| {m - 1} | {med / 1e3:.0f} | {med / step:.2f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--quick",
        action="store_true",
        help="the default pair, K = 3 and adaptive, 1 repeat, 100 tokens",
    )
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--pairs", nargs="*", default=None)
    ap.add_argument("--ks", nargs="*", type=int, default=None)
    ap.add_argument("--out", default=None, help="also write the tables (markdown) here")
    ap.add_argument("--verify-cost", action="store_true", help="only the v(K) table")
    args = ap.parse_args()
    if args.verify_cost:
        print(verify_cost())
        return
    cfg = dict(QUICK if args.quick else FULL)
    cfg["repeats"] = args.repeats or cfg["repeats"]
    cfg["pairs"] = [p for p in (args.pairs or cfg["pairs"]) if p in available_pairs()]
    cfg["ks"] = args.ks or cfg["ks"]
    prompts = read_prompts()
    start, load0 = time.perf_counter(), os.getloadavg()
    costs = measure_all_costs(cfg["pairs"])
    runs = run_all(cfg["pairs"], cfg["ks"], cfg["repeats"], cfg["tokens"], prompts, costs)
    rows = summarise(runs, cfg["pairs"], cfg["ks"], len(prompts), costs)
    load1 = os.getloadavg()
    parts = [
        f"Machine: {os.cpu_count()} CPUs, OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}, numpy {np.__version__}; {cfg['tokens']} "
        f"tokens after each of {len(prompts)} prompts; medians of {cfg['repeats']} interleaved "
        f"repeats; load average (1, 5, 15 min) at the start {load0[0]:.1f} {load0[1]:.1f} "
        f"{load0[2]:.1f}, at the end {load1[0]:.1f} {load1[1]:.1f} {load1[2]:.1f}; "
        f"took {time.perf_counter() - start:.0f} s; OPENBLAS_CORETYPE="
        f"{os.environ.get('OPENBLAS_CORETYPE', '(not set)')}.",
        costs_table(costs),
        summary_table(rows),
        goals(rows),
    ]
    first = cfg["pairs"][0]
    for t in (0.0, 1.0):
        for r in rows:
            if r["pair"] == first and r["T"] == t and r["K"] in (ADAPTIVE, 3):
                parts.append(prompt_table(r, prompts))
    text = "\n\n".join(parts)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
