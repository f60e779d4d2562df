"""Server-side time of one rerun of every page, printed as a table (issue 3's goals).

Run: python benchmarks/bench_pages.py [--reruns N]

- Every page file (app.py and pages/*.py, whoever wrote it) runs under
  streamlit.testing.v1.AppTest with default inputs: two warm-up runs (cold
  imports, caches filled), then N timed reruns; the table gives the median
  and the best. AppTest runs the script in the same process as the server
  would, without a browser or a websocket; its own overhead is measured on
  a one-line script and subtracted in the "script" column.
- Interactions that miss the caches: a new alpha on the speedup explorer
  (its figures are rebuilt) and a new seed in the losslessness lab (a new
  Monte Carlo run).
- The lab's Monte Carlo alone (simulate_rounds + losslessness_test) with
  the page's default sample count, and with its maximum.
- runner.postScriptGC: AppTest does not collect garbage after a run, but the
  server does when that option is true (Streamlit's default). The cost it
  would add is measured as gc.collect(2) right after a rerun of each page,
  in this process with every page loaded.

Goals: under 100 ms per rerun with default inputs; the default Monte Carlo
run under 1 s.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere; pages import specdec_core and specdec_ui

import numpy as np  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

import specdec_core as sc  # noqa: E402
from specdec_ui import presets  # noqa: E402

TIMEOUT = 120  # seconds for one AppTest run (the first pays for cold imports)


def timed_runs(at: AppTest, reruns: int, before=None) -> list[float]:
    """Wall seconds of ``reruns`` calls of at.run(), after ``before(i)`` if given."""
    times = []
    for i in range(reruns):
        if before is not None:
            before(at, i)
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
    return times


def page_files() -> list[Path]:
    return [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]


def open_app(path: Path) -> AppTest:
    at = AppTest.from_file(str(path), default_timeout=TIMEOUT)
    at.run()  # cold: imports, caches
    at.run()  # warm
    return at


def gc_cost(at: AppTest, repeats: int = 5) -> float:
    """Median seconds of a full collection right after a rerun (what postScriptGC adds)."""
    times = []
    for _ in range(repeats):
        at.run()
        t0 = time.perf_counter()
        gc.collect(2)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=9, help="timed reruns per page")
    args = parser.parse_args()

    baseline_app = AppTest.from_string("import streamlit as st\nst.write('x')\n")
    baseline_app.run()
    baseline = statistics.median(timed_runs(baseline_app, max(args.reruns, 9)))

    rows = []
    for path in page_files():
        name = str(path.relative_to(ROOT))
        try:
            at = open_app(path)
            times = timed_runs(at, args.reruns)
            problem = "exception" if at.exception else ""
            collect = gc_cost(at)
        except Exception as err:  # a broken page must not hide the others' numbers
            rows.append((name, None, None, None, None, f"{type(err).__name__}: {err}"[:60]))
            continue
        med = statistics.median(times)
        rows.append((name, med, min(times), med - baseline, collect, problem))

    def new_alpha(at: AppTest, i: int) -> None:
        at.slider(key="speed_alpha").set_value(round(0.31 + 0.01 * i, 2))

    def new_seed(at: AppTest, i: int) -> None:
        at.number_input(key="lab_seed").set_value(1000 + i)

    interactions = []
    for page, label, before in (
        ("pages/scripts/speedup.py", "speedup: new alpha (figures rebuilt)", new_alpha),
        ("pages/scripts/losslessness.py", "lab: new seed (new Monte Carlo run)", new_seed),
    ):
        if (ROOT / page).is_file():
            at = open_app(ROOT / page)
            times = timed_runs(at, args.reruns, before)
            interactions.append((label, statistics.median(times), min(times)))

    p_target = sc.parse_distribution(presets.LAB_PRESETS[presets.DEFAULT_LAB_PRESET].p_text)
    q_draft = sc.parse_distribution(
        presets.LAB_PRESETS[presets.DEFAULT_LAB_PRESET].q_text, name="q"
    )

    def monte_carlo(rounds: int) -> list[float]:
        times = []
        for seed in range(5):
            t0 = time.perf_counter()
            result = sc.simulate_rounds(
                p_target, q_draft, presets.DEFAULT_K, rounds, rng=np.random.default_rng(seed)
            )
            sc.losslessness_test(result, significance=presets.SIGNIFICANCE)
            times.append(time.perf_counter() - t0)
        return times

    print(
        f"AppTest overhead (one-line script): {baseline * 1e3:.1f} ms per run, subtracted in "
        "'script'.\n"
    )
    print(
        f"{'page (default inputs)':34} {'median':>8} {'best':>8} {'script':>8} {'gc(2)':>8}  note"
    )
    print("-" * 84)
    for name, med, best, script, collect, note in rows:
        if med is None:
            print(f"{name:34} {'':>8} {'':>8} {'':>8} {'':>8}  {note}")
            continue
        flag = "" if script < 0.100 else "  over 100 ms"
        print(f"{name:34} {ms(med)} {ms(best)} {ms(script)} {ms(collect)}  {note}{flag}")
    print("(ms; 'gc(2)' is what runner.postScriptGC = true would add to every rerun)\n")

    print(f"{'interaction (cache miss)':46} {'median':>8} {'best':>8}")
    print("-" * 64)
    for label, med, best in interactions:
        print(f"{label:46} {ms(med)} {ms(best)}")
    print()

    print(f"{'lab Monte Carlo (simulate + tests)':46} {'median':>8} {'best':>8}")
    print("-" * 64)
    for rounds in (presets.DEFAULT_ROUNDS, presets.MAX_ROUNDS_PAGE):
        times = monte_carlo(rounds)
        tag = "default" if rounds == presets.DEFAULT_ROUNDS else "maximum"
        print(
            f"{f'{rounds:,} rounds, K = {presets.DEFAULT_K} ({tag})':46} "
            f"{ms(statistics.median(times))} {ms(min(times))}"
        )
    print("\nGoals: under 100 ms per rerun (script column); default Monte Carlo under 1 s.")


if __name__ == "__main__":
    main()
