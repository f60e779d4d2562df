"""Benchmark the model pairs over a fixed prompt set: fixed K against K with the guard.

The prompts are ``benchmarks/prompts_model_pairs.txt`` (12, chosen before any tuning:
6 held-out corpus openings, 6 typed the way a student would). For every pair and
temperature (0 and 1): ``--tokens`` new tokens after each prompt with fixed K = 1..4 and
with the same K behind the guard that steps aside when drafting does not pay
(:mod:`specdec_core.lm.adaptive`, started from costs measured here at the start,
:func:`specdec_core.lm.measure_costs`, then measured on each run's own clock; the page's
"Steps aside" draft length), ``--repeats`` repeats (repeat r samples with seed r; in every
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
OpenBLAS reports with each table. ``--quick``: the default pair, K = 3 fixed and
guarded, 1 repeat, 100 tokens (a smoke test, about a minute).

Tables (all speedups = plain decoding's CPU time / the run's, per prompt the median
over the repeats, then over the prompts):

- **costs**: c (the draft's call), a (the guard's work for a round) and v(0..4) as
  measured apart at the start, in plain steps: where each guarded run starts;
- **speed**: per pair, T and draft length: drafts a round, alpha (kept / checked),
  tokens a round, median / worst / best prompt, priced (the same rounds priced by the
  costs measured at the start, no clock: tokens / (c x calls (+ a x rounds) + the sum of
  v(n) over rounds)), same (T = 0: every output equals the target's greedy output);
- **goals** (issue 27): per pair and T, the best guarded K's median against the best
  fixed K's (goal 1: >= best fixed K - 0.03), and the worst prompt of every guarded K
  (goal 2: none below 0.95x of plain decoding); each clocked and priced;
- **prices**: what the guarded runs paid against what the profile priced, in plain steps
  (the block's plain step): the guard a per round, a draft call c, v(n) for the n they
  checked and a plain round of the guard's; the share of rounds it stepped aside; and
  the budget: a guarded drafting step (c x calls + a, paid) against the same fixed K's
  drafting step (its draft step's CPU time per round, measured on the same prompts in
  an untimed pass) + 0.05 of a plain step;
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
# A draft length is (K, how): a fixed K, K behind the guard (its own clock), or
# (--profile-prices) K behind a guard priced by the costs measured at the start.
FIXED, GUARDED, PROFILE_PRICES = "fixed", "guarded", "guarded, profile prices"
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


def measure_all_costs(pairs, k_max: int) -> dict:
    """costs[(pair, T)]: this machine's c, a and v(0..k_max), once per pair and T."""
    return {
        (name, t): measure_costs(name, k_max, temperature=t) for name in pairs for t in TEMPERATURES
    }


def _how(name, length, t, costs) -> dict:
    """The options of one draft length (K, how): fixed, or guarded (own clock or not)."""
    k, how = length
    if how == FIXED:
        return {"k": k}
    return {"k": k, "adaptive": replace(costs[(name, t)], own_clock=how == GUARDED)}


def run_all(cfg: dict, prompts, costs) -> dict:
    """runs[(pair, T, (K, how), prompt)] = [(spec, speedup, plain step, same tokens), ...],
    one per repeat. Every speculative
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
    (c x draft calls (+ a x rounds, guarded) + sum of v(n) over the rounds), in plain
    steps (a plain round of the guard's is v(0))."""
    cost = profile.draft * spec.draft_calls + sum(profile.verify[n] for n in spec.draft_sizes)
    if spec.prices is not None:
        cost += profile.plan * spec.n_rounds
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
    """One row per (pair, T, (K, how)): medians, worst and best over the prompts."""
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
    ks = range(next(iter(costs.values())).k_max + 1)
    lines = [
        f"Costs measured apart at the start (per-thread CPU time, interleaved, medians; BLAS "
        f"kernels: {blas_kernel()}), in plain target steps: where each guarded run starts.",
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
    """The draft lengths compared: every K fixed, every K guarded, and (--profile-prices)
    every K behind a guard priced by the profile throughout."""
    hows = [FIXED, GUARDED, *([PROFILE_PRICES] if cfg.get("profile_prices") else [])]
    return [(k, how) for how in hows for k in cfg["ks"]]


def _k_label(length) -> str:
    k, how = length
    return str(k) if how == FIXED else f"{k}, {how}"


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
        f"Goals (issue 27): goal 1, the best guarded K's median >= the best fixed K's median "
        f"- {GOAL_GAP}; goal 2, no prompt of any guarded K below {GOAL_FLOOR}x of plain "
        "decoding (the guarded K and prompt of the worst case named). Clocked = per-thread "
        "CPU time; priced = the costs measured at the start, no clock.",
        "",
        "| pair | T | best fixed K | best guarded K | goal 1 | worst guarded prompt | goal 2 "
        "| priced: best fixed K | best guarded K | goal 1 | worst guarded prompt | goal 2 |",
        "|" + "---|" * 12,
    ]
    for name in dict.fromkeys(r["pair"] for r in rows):
        for t in TEMPERATURES:
            mine = [r for r in rows if r["pair"] == name and r["T"] == t]
            fixed = [r for r in mine if r["K"][1] == FIXED]
            guarded = [r for r in mine if r["K"][1] == GUARDED]
            cells = []
            for speed, worst in (("cpu", "worst"), ("priced", "worst_priced")):
                best = max(fixed, key=lambda r: r[speed])
                ours = max(guarded, key=lambda r: r[speed])
                low = min(guarded, key=lambda r: r[worst])
                cells += [
                    f"K = {best['K'][0]}: {best[speed]:.2f}x",
                    f"K = {ours['K'][0]}: {ours[speed]:.2f}x",
                    _verdict(ours[speed] >= best[speed] - GOAL_GAP),
                    f"K = {low['K'][0]}: {low[worst]:.2f}x",
                    _verdict(low[worst] >= GOAL_FLOOR),
                ]
            lines.append(f"| {name} | {t:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _per_step(total: float, count: int, unit: float) -> str:
    return f"{total / count / unit:.3f}" if count else "-"


def _ledger_cells(ledgers, unit: float, k: int) -> tuple[str, ...]:
    """Stepped aside, a per round, c priced / paid, v(n) priced / paid, the drafting step."""
    rounds = sum(g.n_rounds for g in ledgers)
    guard = sum(g.guard_paid for g in ledgers)
    calls = sum(g.calls for g in ledgers)
    drafting = sum(sum(g.rounds) for g in ledgers)  # rounds that called the draft
    verify = []
    for n in range(k + 1):
        m = sum(g.rounds[n] for g in ledgers)
        if m >= 0.05 * rounds:  # the n checked often
            planned = sum(g.verify_planned[n] for g in ledgers)
            paid = sum(g.verify_paid[n] for g in ledgers)
            verify.append(f"v({n}) {_per_step(planned, m, unit)} / {_per_step(paid, m, unit)}")
    plain = sum(g.plain_rounds for g in ledgers)
    verify.append(
        f"plain {_per_step(sum(g.plain_planned for g in ledgers), plain, unit)} / "
        f"{_per_step(sum(g.plain_paid for g in ledgers), plain, unit)}"
    )
    step = sum(g.draft_paid for g in ledgers) / drafting / unit if drafting else None
    a = guard / rounds
    return (
        f"{plain / rounds:.0%}",
        f"{a * 1e6:.1f} us = {a / unit:.3f}",
        f"{_per_step(sum(g.draft_planned for g in ledgers), calls, unit)} / "
        f"{_per_step(sum(g.draft_paid for g in ledgers), calls, unit)}",
        "; ".join(verify),
        "-" if step is None else f"{step + a / unit:.3f}",
    )


def prices_table(rows, steps: dict) -> str:
    """What the guarded runs paid against the profile's prices, and the budget."""
    lines = [
        "Prices of the guarded runs, in plain steps (the plain partners' step), as the "
        "profile priced them / as paid: stepped aside = plain rounds the guard took; a = the "
        "guard (its decision and its books) per round; c per draft call; v(n) for the n "
        "checked in at least 5 % of rounds, and a plain round of the guard's. Budget: a "
        "guarded drafting step (its draft calls per drafting round, paid, + a) <= the same "
        f"fixed K's drafting step + {BUDGET} (its draft step's CPU time per round, in an "
        "untimed pass).",
        "",
        "| pair | T | K | stepped aside | a per round | c priced / paid | v(n) priced / paid "
        "| guarded drafting step | fixed K's drafting step | budget |",
        "|" + "---|" * 10,
    ]
    for r in (r for r in rows if r["K"][1] == GUARDED):
        k = r["K"][0]
        cells = _ledger_cells(r["ledgers"], statistics.median(r["units"]), k)
        fixed = steps[(r["pair"], r["T"], k)]
        ok = (
            "n/a (never drafted)"
            if cells[-1] == "-"
            else _verdict(float(cells[-1]) <= fixed + BUDGET)
        )
        lines.append(
            f"| {r['pair']} | {r['T']:g} | {k} | " + " | ".join(cells) + f" | {fixed:.3f} | {ok} |"
        )
    return "\n".join(lines)


def prompt_table(rows, prompts, name: str, t: float) -> str:
    """Per prompt of one pair and T: every draft length's median speedup."""
    mine = [r for r in rows if r["pair"] == name and r["T"] == t]
    head = " | ".join(_k_label(r["K"]) for r in mine)
    lines = [
        f"Per prompt: {name}, T = {t:g} (median over the repeats, per-thread CPU time; a "
        "guarded run's drafts a round in brackets)",
        "",
        f"| prompt | source | {head} |",
        "|" + "---|" * (2 + len(mine)),
    ]
    for i, (source, text) in enumerate(prompts):
        shown = text.replace("\n", "\\n").replace("|", "\\|")[:48]
        cells = []
        for r in mine:
            p = r["per_prompt"][i]
            extra = "" if r["K"][1] == FIXED else f" ({p['drafts']:.2f})"
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
    costs = measure_all_costs(cfg["pairs"], max(cfg["ks"]))
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
    ap.add_argument(
        "--quick", action="store_true", help="default pair, K = 3 (+ guarded), 1 repeat"
    )
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
        help="also run every K behind a guard priced by the costs measured at the start",
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
