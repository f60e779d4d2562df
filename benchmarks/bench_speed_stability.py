"""Does the Model pair lab's measured speedup hold still? 10 fresh visits beside a CPU hog.

    python benchmarks/bench_speed_stability.py            # about 2-3 minutes on 2 cores
    python benchmarks/bench_speed_stability.py --visits 3 --hogs 1

Each "visit" is a fresh Python process (a fresh server's first measurement) that loads
the page's default pair and measures the speedup at the page's defaults (K = 3, T = 0,
the reference run of 200 tokens on the default prompt) twice:

- **new**: ``specdec_core.lm.timing.measure_speedup`` (what the page shows now): CPU time
  of the measuring thread, speculative and plain decoding in turns round by round, median
  of 5 repeats;
- **old**: ``specdec_core.lm.compare_pair`` (what the page showed before): wall-clock
  ``perf_counter``, 3 repeats of whole runs.

Meanwhile ``--hogs`` processes spin on the CPU (``while True: pass``). First one visit
runs without a hog: the reference. The table gives each visit's figures and whether the
new one is within 15 % of the reference (goal: 10 of 10) and of docs/PERFORMANCE.md's 1.45x.
The hogs are stopped by their PIDs.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VISIT = """
import json, time
import specdec_core.lm as lm
from specdec_core.lm.timing import impossible_reasons, measure_speedup
from specdec_ui.model_pairs import work as lw
draft, target = lm.load_pair(lw.DEFAULT_PAIR)
ids = lm.encode_prompt(target.tokenizer, lw.DEFAULT_PROMPT)
t0 = time.perf_counter()
m = lw.compute_speed(lw.DEFAULT_PAIR, lw.DEFAULT_K, 0.0)
t1 = time.perf_counter()
old = lm.compare_pair(draft, target, ids, k=lw.DEFAULT_K, max_new_tokens=lw.SPEED_TOKENS,
                      temperature=0.0, seed=0, repeats=3, trace=False)
print(json.dumps({"new": m.speedup, "lo": m.spread[0], "hi": m.spread[1], "v": m.v,
                  "c": m.c, "refused": impossible_reasons(m), "old": old.cost.measured_speedup,
                  "old_v": old.cost.v, "wall": t1 - t0}))
"""


def visit() -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", VISIT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def start_hogs(n: int) -> list[subprocess.Popen]:
    return [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(n)
    ]


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for hog in hogs:
        if hog.poll() is None:
            os.kill(hog.pid, signal.SIGKILL)
            hog.wait(10)


def within(x: float, ref: float, tol: float = 0.15) -> bool:
    return abs(x / ref - 1) <= tol


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--visits", type=int, default=10)
    parser.add_argument("--hogs", type=int, default=1, help="CPU-spinning processes beside")
    parser.add_argument("--readme", type=float, default=1.45, help="docs/PERFORMANCE.md's figure")
    args = parser.parse_args(argv)
    if not (1 <= args.visits <= 50 and 0 <= args.hogs <= 8):
        parser.error("--visits 1..50, --hogs 0..8")
    sys.stdout.reconfigure(line_buffering=True)
    ref = visit()
    print(
        f"reference (no hog): new {ref['new']:.2f}x (range {ref['lo']:.2f}-{ref['hi']:.2f}), "
        f"old {ref['old']:.2f}x; load average {os.getloadavg()[0]:.1f}\n"
    )
    hogs = start_hogs(args.hogs)
    rows = []
    try:
        time.sleep(1.0)
        for i in range(args.visits):
            r = visit()
            r["load"] = os.getloadavg()[0]
            rows.append(r)
            print(
                f"| {i + 1} | {r['new']:.2f}x | {r['lo']:.2f}-{r['hi']:.2f} | {r['v']:.2f} | "
                f"{'refused' if r['refused'] else 'shown'} | {r['old']:.2f}x | {r['old_v']:.2f} | "
                f"{'yes' if within(r['new'], ref['new']) else 'NO'} | "
                f"{'yes' if within(r['new'], args.readme) else 'no'} | {r['wall']:.1f} | "
                f"{r['load']:.1f} |"
            )
    finally:
        stop_hogs(hogs)
    print(
        "\n| visit | new speedup | range | v(K) | page | old speedup | old v(K) | within 15 % of "
        f"reference {ref['new']:.2f}x | within 15 % of PERFORMANCE.md {args.readme:.2f}x | "
        "measure s | load |"
    )
    print("| ---: | ---: | ---: | ---: | --- | ---: | ---: | --- | --- | ---: | ---: |")
    for i, r in enumerate(rows):
        print(
            f"| {i + 1} | {r['new']:.2f}x | {r['lo']:.2f}-{r['hi']:.2f} | {r['v']:.2f} | "
            f"{'refused' if r['refused'] else 'shown'} | {r['old']:.2f}x | {r['old_v']:.2f} | "
            f"{'yes' if within(r['new'], ref['new']) else 'NO'} | "
            f"{'yes' if within(r['new'], args.readme) else 'no'} | {r['wall']:.1f} | "
            f"{r['load']:.1f} |"
        )
    new, old = [r["new"] for r in rows], [r["old"] for r in rows]
    ok = sum(within(x, ref["new"]) for x in new)
    print(
        f"\nnew: {min(new):.2f}-{max(new):.2f}x (median {statistics.median(new):.2f}), "
        f"{ok}/{len(new)} within 15 % of the reference; old: {min(old):.2f}-{max(old):.2f}x "
        f"(median {statistics.median(old):.2f}); {args.hogs} hog(s)."
    )
    return 0 if ok == len(new) else 1


if __name__ == "__main__":
    sys.exit(main())
