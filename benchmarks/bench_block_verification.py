"""Speed of block verification's Monte Carlo against the basic rule, printed as a table.

Run: nice -n 10 python benchmarks/bench_block_verification.py [--rounds N]

Goal (issue 36): ``simulate_rounds(variant="block_verification")`` costs at most 3x the
basic rule ("correct") per drafted position, both measured in the same run (best of
interleaved repeats; the machine is shared and noisy). A drafted position is one draft
token with its coin: K per round for both rules (block verification drafts and checks all
K of every round; the basic rule stops at the first rejection, so its cost per drafted
position counts K as well: the same work a serving engine drafts). The last column is the
basic rule's cost per position it really checks (sum_{i<K} alpha^i per round: its chunk
skips the rounds that already stopped, which block verification cannot, as it decides all
K drafts of every round). Two pairs: the labs' default preset (V = 5) and a random pair
over V = 8, each at K = 4 and K = 8. The times include building the run's tables (block
verification's exact round-length law).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere
import specdec_core as sc  # noqa: E402
from benchmarks.common import best_of  # noqa: E402

GOAL_RATIO = 3.0
RULES = ("correct", "block_verification")


def pairs() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The pairs measured: the labs' default preset and a random pair over 8 tokens."""
    gen = np.random.default_rng(0)
    return {
        "lab preset, V = 5": (
            np.array([0.40, 0.25, 0.20, 0.10, 0.05]),
            np.array([0.30, 0.30, 0.15, 0.15, 0.10]),
        ),
        "random, V = 8": (gen.dirichlet(np.ones(8)), gen.dirichlet(np.ones(8))),
    }


def measure(p, q, k: int, rounds: int, repeats: int) -> dict[str, float]:
    """Best seconds per run of each rule, interleaved so that load spikes hit both alike."""
    rng = np.random.default_rng(1)
    times: dict[str, list[float]] = {name: [] for name in RULES}
    for _ in range(repeats):
        for name in RULES:
            run = lambda v=name: sc.simulate_rounds(p, q, k, rounds, rng=rng, variant=v)  # noqa: E731
            times[name].append(best_of(run, 1))
    return {name: min(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=500_000, help="simulated rounds per run")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.rounds:,} rounds per run, best of {args.repeats}")
    print(f"load average (1, 5, 15 min) at the start: {load} on {os.cpu_count()} CPUs")
    print(
        f"{'pair':<18} {'K':>2} {'basic ns/pos.':>13} {'block ns/pos.':>13} "
        f"{'ratio':>6} {'tokens/round basic':>18} {'block':>6} {'basic ns/checked':>16}"
        f"  goal <= {GOAL_RATIO:g}x"
    )
    worst = 0.0
    for label, (p, q) in pairs().items():
        for k in (4, 8):
            best = measure(p, q, k, args.rounds, args.repeats)
            per_position = {name: best[name] / (args.rounds * k) * 1e9 for name in RULES}
            ratio = per_position["block_verification"] / per_position["correct"]
            worst = max(worst, ratio)
            tokens = [sc.RULES[name].expected(p, q, k) for name in RULES]
            checked = sum(sc.acceptance_rate(p, q) ** i for i in range(k))  # per basic round
            per_checked = best["correct"] / (args.rounds * checked) * 1e9
            print(
                f"{label:<18} {k:>2} {per_position['correct']:>13.1f} "
                f"{per_position['block_verification']:>13.1f} {ratio:>6.2f} "
                f"{tokens[0]:>18.3f} {tokens[1]:>6.3f} {per_checked:>16.1f}  "
                f"{'met' if ratio <= GOAL_RATIO else 'MISSED'}"
            )
    print(f"worst ratio {worst:.2f}: goal {'met' if worst <= GOAL_RATIO else 'MISSED'}")


if __name__ == "__main__":
    main()
