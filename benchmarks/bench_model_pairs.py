"""Benchmark the model pairs over a fixed prompt set: fixed K against the adaptive length.

The prompts are ``benchmarks/prompts_model_pairs.txt`` (12, chosen before any tuning:
6 held-out corpus openings, 6 typed the way a student would). For every pair and
temperature (0 and 1): ``--tokens`` new tokens after each prompt with fixed K = 1..4 and
with the adaptive draft length (K <= 8, :mod:`specdec_core.lm.adaptive`, started from
costs measured here at the start, :func:`specdec_core.lm.measure_costs`, then priced by
each run's own clock), ``--repeats`` repeats (repeat r samples with seed r; in every
repeat, every prompt, temperature, pair and draft length, in an order of the configs
that turns every repeat). Every speculative run takes turns round by round with a plain
run of its own, as the Model pair lab measures a run
(:func:`specdec_core.lm.timing.lockstep_runs`), so a busy phase of the machine hits both;
its speedup is the plain run's CPU time over its own, in per-thread CPU time
(``time.thread_time``: time spent waiting for a core does not count).

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_model_pairs.py \\
        --repeats 6 --kernels default Haswell --out benchmarks/results_new.md

``--kernels`` runs the whole benchmark once per OpenBLAS kernel set, each in its own
process with ``OPENBLAS_CORETYPE`` set (``default``: unset), and prints the kernel
OpenBLAS reports with each table. ``--quick``: the default pair, K = 3 and adaptive, 1
repeat, 100 tokens (a smoke test, about a minute).

Tables (all speedups = plain decoding's CPU time / the run's, per prompt the median
over the repeats, then over the prompts):

- **costs**: c (the draft's call), a (the planner with it) and v(0..8) as measured apart
  at the start, in plain steps: where each adaptive run starts;
- **speed**: per pair, T and draft length: drafts a round, alpha (kept / checked),
  tokens a round, median / worst / best prompt, priced (the same rounds priced by the
  costs measured at the start, no clock: tokens / (c x calls (+ a x looks) + the sum of
  v(n) over rounds)), same (T = 0: every output equals the target's greedy output);
- **goals** (issue 27): per pair and T, the best fixed K's median against adaptive's;
  goal 1: adaptive >= best fixed K - 0.03; goal 2: no prompt of adaptive below 0.95x of
  plain decoding; each clocked and priced;
- **prices**: what the adaptive runs planned with and what they paid, in plain steps (the
  block's plain step): the planner a per look and per round, c + a per look (planned,
  paid as c + a), v(n) for the lengths they chose and a plain round of the guard's;
  and the budget: adaptive's drafting step (c + a per look, paid) against the best fixed
  K's drafting step (its draft step's CPU time per round, measured on the same prompts
  in an untimed pass) + 0.05 of a plain step;
- **per prompt** for the default pair.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import specdec_core.lm.generate as gen  # noqa: E402
from specdec_core.lm import (  # noqa: E402
    autoregressive_generate,
    available_pairs,
    encode_prompt,
    load_pair,
    load_tokenizer,
    measure_costs,
    speculative_generate,
)
from specdec_core.lm.blas import blas_kernel  # noqa: E402
from specdec_core.lm.timing import lockstep_runs  # noqa: E402

PROMPTS_FILE = ROOT / "benchmarks" / "prompts_model_pairs.txt"
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
    "repeats": 6,
    "tokens": 200,
}
QUICK = {"pairs": ["lookup-table-to-gpt-4L"], "ks": [3], "repeats": 1, "tokens": 100}
ADAPTIVE = "adaptive"  # the K column of the adaptive runs
PROFILE_PRICES = "profile prices"  # (--profile-prices) adaptive, never learning from its clock
ADAPTIVE_K = 8  # the most an adaptive round may draft
TEMPERATURES = (0.0, 1.0)
GOAL_GAP, GOAL_FLOOR, BUDGET = 0.03, 0.95, 0.05  # issue 27's goals


def read_prompts(path: Path = PROMPTS_FILE) -> list[tuple[str, str]]:
    """(source, text) per line of the prompt file; '#' lines are comments."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            source, text = line.split("\t", 1)
            out.append((source, text.replace("\\n", "\n")))
    return out


def measure_all_costs(pairs) -> dict:
    """costs[(pair, T)]: this machine's c, a and v(0..ADAPTIVE_K), once per pair and T."""
    return {
        (name, t): measure_costs(name, ADAPTIVE_K, temperature=t)
        for name in pairs
        for t in TEMPERATURES
    }


def _how(name, k, t, costs) -> dict:
    """The draft length of one config: a fixed K, or adaptive (its own clock or not)."""
    if isinstance(k, int):
        return {"k": k}
    return {"k": ADAPTIVE_K, "adaptive": replace(costs[(name, t)], own_clock=k == ADAPTIVE)}


def run_all(cfg: dict, prompts, costs) -> dict:
    """runs[(pair, T, K, prompt)] = [(spec, speedup, plain step, same tokens), ...], one
    per repeat; K is a fixed K or an adaptive label. Every speculative
    run takes turns round by round with a plain run of its own (the way the page
    measures a run: :func:`specdec_core.lm.timing.lockstep_runs`), so both meet the same
    phase of a busy machine; the configs run in an order that turns every repeat."""
    ids = [encode_prompt(load_tokenizer(), text) for _, text in prompts]
    models = {name: load_pair(name) for name in cfg["pairs"]}
    configs = [(name, k) for name in cfg["pairs"] for k in _lengths(cfg)]
    runs: dict = {}
    for r in range(cfg["repeats"]):
        turn = r % len(configs)
        order = configs[turn:] + configs[:turn]
        for pi, prompt in enumerate(ids):
            for t in TEMPERATURES:
                for name, k in order:
                    spec_s, plain_s, spec, plain = lockstep_runs(
                        models[name], prompt, temperature=t, max_new_tokens=cfg["tokens"],
                        seed=r, **_how(name, k, t, costs),
                    )  # fmt: skip
                    speedup, step = plain_s / spec_s, plain.cpu_total / len(plain.tokens)
                    run = (spec, speedup, step, spec.tokens == plain.tokens)
                    runs.setdefault((name, t, k, pi), []).append(run)
        print(f"repeat {r + 1}/{cfg['repeats']} done, load {_load()}", flush=True)
    return runs


def _plain(target, prompt, t, tokens, seed):
    return autoregressive_generate(
        target, prompt, max_new_tokens=tokens, temperature=t, rng=np.random.default_rng(seed)
    )


def draft_steps(cfg: dict, prompts, ks) -> dict:
    """steps[(pair, T, K)]: a fixed K's drafting step (the engine's _draft_step) in CPU
    seconds per round, and the plain step it is compared with, over one untimed pass."""
    ids = [encode_prompt(load_tokenizer(), text) for _, text in prompts]
    honest, spent = gen._draft_step, []

    def timed(*args, **kwargs):
        start = time.thread_time()
        out = honest(*args, **kwargs)
        spent.append(time.thread_time() - start)
        return out

    steps = {}
    gen._draft_step = timed
    try:
        for name in cfg["pairs"]:
            draft, target = load_pair(name)
            for t in TEMPERATURES:
                for k in ks:
                    spent.clear()
                    plain = [_plain(target, p, t, cfg["tokens"], 0).cpu_total for p in ids]
                    for p in ids:
                        speculative_generate(
                            draft, target, p, k=k, max_new_tokens=cfg["tokens"], temperature=t,
                            rng=np.random.default_rng(0), trace=False,
                        )  # fmt: skip
                    step = statistics.median(plain) / cfg["tokens"]
                    steps[(name, t, k)] = statistics.fmean(spent) / step
    finally:
        gen._draft_step = honest
    return steps


def priced(spec, profile) -> float:
    """Speedup priced by the costs measured at the start instead of clocked: tokens /
    (c x draft calls + a x looks + sum of v(n) over the rounds), in plain steps."""
    ledger = spec.prices
    if ledger is None:  # a fixed K: one call a round (a model draft: K), no planner
        cost = profile.draft * spec.draft_calls + sum(profile.verify[n] for n in spec.draft_sizes)
    else:
        looks = (profile.draft + profile.plan) * ledger.looks
        cost = looks + sum(profile.verify[n] * m for n, m in enumerate(ledger.rounds))
        cost += profile.verify[0] * ledger.plain_rounds
    return spec.emitted / cost


def prompt_row(runs, profile) -> dict:
    """Medians over the repeats of one (pair, T, K, prompt)."""
    med = statistics.median
    specs = [s for s, _, _, _ in runs]
    return {
        "cpu": med(speedup for _, speedup, _, _ in runs),
        "priced": med(priced(s, profile) for s in specs),
        "accepted": sum(s.accepted for s in specs),
        "checked": sum(s.checked for s in specs),
        "tpr": statistics.fmean(s.tokens_per_round for s in specs),
        "drafts": statistics.fmean(s.drafted / s.n_rounds for s in specs),
        "same": all(same for _, _, _, same in runs),
    }


def summarise(runs: dict, cfg: dict, n_prompts: int, costs: dict) -> list[dict]:
    """One row per (pair, T, K): medians, worst and best over the prompts."""
    rows = []
    for name in cfg["pairs"]:
        for t in TEMPERATURES:
            for k in _lengths(cfg):
                mine = [runs[(name, t, k, i)] for i in range(n_prompts)]
                rows.append(_row(name, t, k, mine, costs[(name, t)]))
    return rows


def _row(name, t, k, mine, profile) -> dict:
    """The summary of one (pair, T, K): ``mine`` = the runs of each prompt."""
    per = [prompt_row(runs, profile) for runs in mine]
    checked = sum(p["checked"] for p in per)
    every = [run for runs in mine for run in runs]
    return {
        "pair": name,
        "T": t,
        "K": k,
        "per_prompt": per,
        "alpha": sum(p["accepted"] for p in per) / checked if checked else 0.0,
        "tpr": statistics.median(p["tpr"] for p in per),
        "drafts": statistics.median(p["drafts"] for p in per),
        "cpu": statistics.median(p["cpu"] for p in per),
        "worst": min(p["cpu"] for p in per),
        "best": max(p["cpu"] for p in per),
        "priced": statistics.median(p["priced"] for p in per),
        "worst_priced": min(p["priced"] for p in per),
        "same": all(p["same"] for p in per) if t == 0 else None,
        "ledgers": [s.prices for s, _, _, _ in every],
        "units": [step for _, _, step, _ in every],
    }


def costs_table(costs: dict) -> str:
    """The costs measured at the start: c, a, v(0..K), and the BLAS kernels."""
    ks = range(ADAPTIVE_K + 1)
    lines = [
        f"Costs measured apart at the start (per-thread CPU time, interleaved, medians; BLAS "
        f"kernels: {blas_kernel()}), in plain target steps: where each adaptive run starts.",
        "",
        "| pair | T | step (us) | c | a | " + " | ".join(f"v({k})" for k in ks) + " |",
        "|" + "---|" * (5 + len(ks)),
    ]
    for (name, t), c in costs.items():
        verify = " | ".join(f"{v:.2f}" for v in c.verify)
        lines.append(
            f"| {name} | {t:g} | {c.step_s * 1e6:.0f} | {c.draft:.3f} | {c.plan:.3f} | {verify} |"
        )
    return "\n".join(lines)


def _lengths(cfg: dict) -> list:
    """The draft lengths compared: the fixed K, adaptive, and (--profile-prices) adaptive
    priced by the profile throughout."""
    return [*cfg["ks"], ADAPTIVE, *([PROFILE_PRICES] if cfg.get("profile_prices") else [])]


def _k_label(k) -> str:
    if isinstance(k, int):
        return str(k)
    return f"adaptive <= {ADAPTIVE_K}" + (", profile prices" if k == PROFILE_PRICES else "")


def speed_table(rows) -> str:
    lines = [
        "| pair | T | K | drafts | alpha | tok/round | median (CPU) | worst | best | priced "
        "| worst (priced) | same |",
        "|" + "---|" * 12,
    ]
    for r in rows:
        same = "n/a" if r["same"] is None else ("yes" if r["same"] else "NO")
        lines.append(
            f"| {r['pair']} | {r['T']:g} | {_k_label(r['K'])} | {r['drafts']:.2f} | "
            f"{r['alpha']:.2f} | {r['tpr']:.2f} | {r['cpu']:.2f}x | {r['worst']:.2f}x | "
            f"{r['best']:.2f}x | {r['priced']:.2f}x | {r['worst_priced']:.2f}x | {same} |"
        )
    return "\n".join(lines)


def _verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def goals_table(rows) -> str:
    """Issue 27's goals per pair and T, clocked (per-thread CPU) and priced."""
    lines = [
        f"Goals (issue 27): goal 1, adaptive's median >= the best fixed K's median - "
        f"{GOAL_GAP}; goal 2, no prompt of adaptive below {GOAL_FLOOR}x of plain decoding. "
        "Clocked = per-thread CPU time; priced = the costs measured at the start, no clock.",
        "",
        "| pair | T | best fixed K (clocked) | adaptive | goal 1 | its worst prompt | goal 2 "
        "| best fixed K (priced) | adaptive (priced) | goal 1 | worst (priced) | goal 2 |",
        "|" + "---|" * 12,
    ]
    for name in dict.fromkeys(r["pair"] for r in rows):
        for t in TEMPERATURES:
            mine = [r for r in rows if r["pair"] == name and r["T"] == t]
            ada = next(r for r in mine if r["K"] == ADAPTIVE)
            fixed = [r for r in mine if isinstance(r["K"], int)]
            best = max(fixed, key=lambda r: r["cpu"])
            best_p = max(fixed, key=lambda r: r["priced"])
            lines.append(
                f"| {name} | {t:g} | K = {best['K']}: {best['cpu']:.2f}x | {ada['cpu']:.2f}x | "
                f"{_verdict(ada['cpu'] >= best['cpu'] - GOAL_GAP)} | {ada['worst']:.2f}x | "
                f"{_verdict(ada['worst'] >= GOAL_FLOOR)} | K = {best_p['K']}: "
                f"{best_p['priced']:.2f}x | {ada['priced']:.2f}x | "
                f"{_verdict(ada['priced'] >= best_p['priced'] - GOAL_GAP)} | "
                f"{ada['worst_priced']:.2f}x | {_verdict(ada['worst_priced'] >= GOAL_FLOOR)} |"
            )
    return "\n".join(lines)


def _per_step(total: float, count: int, unit: float) -> str:
    return f"{total / count / unit:.3f}" if count else "-"


def _ledger_cells(ledgers, unit: float) -> tuple[str, ...]:
    """Planner per look and per round, c + a per look planned / paid, v(n) planned / paid."""
    looks = sum(g.looks for g in ledgers)
    rounds = sum(g.n_rounds for g in ledgers)
    plan = sum(g.plan_paid for g in ledgers)
    guard = sum(g.guard_paid for g in ledgers)
    paid_look = sum(g.draft_paid for g in ledgers) + plan
    verify = []
    for n in range(ADAPTIVE_K + 1):
        m = sum(g.rounds[n] for g in ledgers)
        if m >= 0.05 * rounds:  # the lengths the runs chose often
            planned = sum(g.verify_planned[n] for g in ledgers)
            paid = sum(g.verify_paid[n] for g in ledgers)
            verify.append(f"v({n}) {_per_step(planned, m, unit)} / {_per_step(paid, m, unit)}")
    plain = sum(g.plain_rounds for g in ledgers)
    verify.append(
        f"plain {_per_step(sum(g.plain_planned for g in ledgers), plain, unit)} / "
        f"{_per_step(sum(g.plain_paid for g in ledgers), plain, unit)}"
    )
    return (
        f"{looks / rounds:.2f}",
        f"{sum(g.shut for g in ledgers) / rounds:.0%}",
        f"{plan / looks * 1e6:.0f} us = {_per_step(plan, looks, unit)}" if looks else "-",
        _per_step(plan + guard, rounds, unit),
        f"{_per_step(sum(g.look_planned for g in ledgers), looks, unit)} / "
        f"{_per_step(paid_look, looks, unit)}",
        "; ".join(verify),
    )


def prices_table(rows, steps: dict) -> str:
    """What the adaptive runs planned with and paid, and the planner's budget."""
    lines = [
        "Prices of the adaptive runs, in plain steps (the plain partners' step), as planned / "
        "as paid: looks = rounds in which a lookup draft computed its guesses, or rows a "
        "model draft computed, per round; shut = rounds the guard kept plain without "
        "looking; a = the planner (guard, estimates, calibration, choice of length, its "
        "bookkeeping) per look and per round; c + a per look; v(n) for the lengths chosen in "
        "at least 5 % of rounds, and a plain round of the guard's. Budget: c + a per look "
        f"(paid) <= the best fixed K's drafting step per call + {BUDGET} (its draft step's "
        "CPU time per round, per row for a model draft, in an untimed pass).",
        "",
        "| pair | T | looks/round | shut | a per look | a per round | c + a per look "
        "| v(n) planned / paid | best fixed K's drafting step | budget |",
        "|" + "---|" * 10,
    ]
    for r in (r for r in rows if not isinstance(r["K"], int)):
        cells = _ledger_cells(r["ledgers"], statistics.median(r["units"]))
        mine = [x for x in rows if (x["pair"], x["T"]) == (r["pair"], r["T"])]
        best = max((x for x in mine if isinstance(x["K"], int)), key=lambda x: x["cpu"])["K"]
        per_token = r["ledgers"][0].per_token
        step = steps[(r["pair"], r["T"], best)] / (best if per_token else 1)
        paid = cells[4].split(" / ")[1]
        ok = "n/a (never looked)" if paid == "-" else _verdict(float(paid) <= step + BUDGET)
        what = f"K = {best}: {step:.3f}" + (" a row" if per_token else "")
        lines.append(f"| {r['pair']} | {r['T']:g} | " + " | ".join(cells) + f" | {what} | {ok} |")
    return "\n".join(lines)


def prompt_table(rows, prompts, name: str, t: float) -> str:
    """Per prompt of one pair and T: every draft length's median speedup."""
    mine = [r for r in rows if r["pair"] == name and r["T"] == t]
    head = " | ".join(_k_label(r["K"]) for r in mine)
    lines = [
        f"Per prompt: {name}, T = {t:g} (median over the repeats, per-thread CPU time; the "
        "adaptive run's drafts a round in brackets)",
        "",
        f"| prompt | source | {head} |",
        "|" + "---|" * (2 + len(mine)),
    ]
    for i, (source, text) in enumerate(prompts):
        shown = text.replace("\n", "\\n").replace("|", "\\|")[:48]
        cells = []
        for r in mine:
            p = r["per_prompt"][i]
            extra = "" if isinstance(r["K"], int) else f" ({p['drafts']:.2f})"
            cells.append(f"{p['cpu']:.2f}x{extra}")
        lines.append(f"| `{shown}` | {source} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verify_cost(repeats: int = 300) -> str:
    """v(K) = CPU time of one verify / one plain step, K = 1..8, by per-thread CPU time.

    Verify = the target call on K+1 tokens + the T = 0 decision (argmax per row); plain
    step = the call on 1 token + its argmax. Interleaved, median of ``repeats`` each,
    after a 40-token context.
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
    lines = [f"plain step {step / 1e3:.0f} us (CPU); BLAS kernels {blas_kernel()}", ""]
    lines += ["| K | verify (us, CPU) | v(K) |", "|---|---|---|"]
    for m in range(2, 10):
        med = statistics.median(times[m])
        lines.append(f"| {m - 1} | {med / 1e3:.0f} | {med / step:.2f} |")
    return "\n".join(lines)


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def benchmark(cfg: dict) -> str:
    """The whole benchmark in this process (one BLAS kernel set): the markdown report."""
    prompts = read_prompts()
    start, load0 = time.perf_counter(), _load()
    costs = measure_all_costs(cfg["pairs"])
    runs = run_all(cfg, prompts, costs)
    rows = summarise(runs, cfg, len(prompts), costs)
    steps = draft_steps(cfg, prompts, cfg["ks"])
    header = (
        f"BLAS kernels: **{blas_kernel()}** (OPENBLAS_CORETYPE="
        f"{os.environ.get('OPENBLAS_CORETYPE', '(not set)')}). Machine: {os.cpu_count()} CPUs, "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, numpy "
        f"{np.__version__}; {cfg['tokens']} tokens after each of {len(prompts)} prompts; "
        f"{cfg['repeats']} interleaved repeats; load average (1, 5, 15 min) at the start "
        f"{load0}, at the end {_load()}; took {time.perf_counter() - start:.0f} s."
    )
    parts = [header, costs_table(costs), speed_table(rows), goals_table(rows)]
    parts += [prices_table(rows, steps)]
    parts += [prompt_table(rows, prompts, cfg["pairs"][0], t) for t in TEMPERATURES]
    return "\n\n".join(parts)


def _child_argv(args) -> list[str]:
    """The options a kernel's own process runs with (all but --kernels and --out)."""
    argv = ["--quick"] if args.quick else []
    argv += ["--profile-prices"] if args.profile_prices else []
    for name in ("repeats", "tokens"):
        if getattr(args, name):
            argv += [f"--{name}", str(getattr(args, name))]
    for name in ("pairs", "ks"):
        if getattr(args, name):
            argv += [f"--{name}", *map(str, getattr(args, name))]
    return argv


def in_subprocesses(kernels: list[str], argv: list[str]) -> str:
    """Run this script once per kernel set (its own process: OpenBLAS reads
    OPENBLAS_CORETYPE when it loads; ``default`` leaves it unset), showing its progress,
    and join their reports."""
    reports = []
    for kernel in kernels:
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
        if kernel != "default":
            env["OPENBLAS_CORETYPE"] = kernel
        print(f"--- kernels: {kernel}", flush=True)
        cmd = [sys.executable, __file__, *argv, "--report-only"]
        with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True) as child:
            lines = iter(child.stdout)
            for line in lines:
                if line.startswith("=== REPORT ==="):
                    break
                print(line, end="", flush=True)
            reports.append(f"### Kernels: {kernel}\n\n" + "".join(lines))
        if child.returncode:
            raise SystemExit(f"the run with kernels {kernel} failed ({child.returncode})")
    return "\n\n".join(reports)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="default pair, K = 3 + adaptive, 1 repeat")
    ap.add_argument("--repeats", type=int, default=None, help="interleaved repeats (default 6)")
    ap.add_argument("--pairs", nargs="*", default=None)
    ap.add_argument("--ks", nargs="*", type=int, default=None, help="fixed K (default 1 2 3 4)")
    ap.add_argument("--tokens", type=int, default=None, help="new tokens a run (default 200)")
    ap.add_argument("--kernels", nargs="*", default=None, help="e.g. default Haswell")
    ap.add_argument("--out", default=None, help="also write the report (markdown) here")
    ap.add_argument("--verify-cost", action="store_true", help="only the v(K) table")
    ap.add_argument(
        "--profile-prices",
        action="store_true",
        help="also run adaptive priced by the costs measured at the start (no clock)",
    )
    ap.add_argument("--report-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.verify_cost:
        print(verify_cost())
        return
    if args.kernels:
        text = in_subprocesses(args.kernels, _child_argv(args))
    else:
        cfg = dict(QUICK if args.quick else FULL)
        for key in ("repeats", "ks", "tokens"):
            cfg[key] = getattr(args, key) or cfg[key]
        cfg["profile_prices"] = args.profile_prices
        cfg["pairs"] = [p for p in (args.pairs or cfg["pairs"]) if p in available_pairs()]
        text = benchmark(cfg)
        if args.report_only:
            print("=== REPORT ===")
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
