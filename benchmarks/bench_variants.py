"""Speed of the variants' Monte Carlo, printed as a table (issue 11's goal).

Run: nice -n 10 python benchmarks/bench_variants.py [--rounds N]

Goal: ``simulate_rounds(variant="multi_draft")`` with m = 4 candidates,
K = 4 positions, V = 64 draws at least 5 million candidates per second, and
costs at most 4x the basic variant ("correct") per drafted candidate, both
measured in the same run (best of several interleaved repeats; the machine is
shared and noisy). A candidate is one drafted token with its coin: K * m per
round for multi-draft, K per round for the basic variant.
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

K, M, V = 4, 4, 64
GOAL_RATE, GOAL_RATIO = 5e6, 4.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=500_000, help="simulated rounds per run")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    gen = np.random.default_rng(0)
    p_target, q_draft = gen.dirichlet(np.ones(V)), gen.dirichlet(np.ones(V))
    rng = np.random.default_rng(1)
    runs = {
        "correct (basic)": (K, {"variant": "correct"}),
        f"multi_draft, m={M}": (K * M, {"variant": "multi_draft", "n_candidates": M}),
        "typical_acceptance": (K, {"variant": "typical_acceptance"}),
    }
    times = {name: [] for name in runs}
    for _ in range(args.repeats):  # interleaved, so that load spikes hit every variant alike
        for name, (_, options) in runs.items():
            times[name].append(
                best_of(
                    lambda o=options: sc.simulate_rounds(
                        p_target, q_draft, K, args.rounds, rng=rng, **o
                    ),
                    1,
                )
            )
    per_candidate = {
        name: min(times[name]) / (args.rounds * cands) for name, (cands, _) in runs.items()
    }
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"K = {K}, V = {V}, {args.rounds:,} rounds per run, best of {args.repeats}")
    print(f"load average (1, 5, 15 min) at the end: {load} on {os.cpu_count()} CPUs")
    print(f"{'variant':<22} {'cand./round':>11} {'time':>10} {'M cand./s':>10} {'ns/cand.':>9}")
    for name, (cands, _) in runs.items():
        t = min(times[name])
        print(
            f"{name:<22} {cands:>11} {t * 1e3:>8.1f}ms {args.rounds * cands / t / 1e6:>10.2f}"
            f" {per_candidate[name] * 1e9:>9.1f}"
        )
    multi = f"multi_draft, m={M}"
    rate = 1.0 / per_candidate[multi]
    ratio = per_candidate[multi] / per_candidate["correct (basic)"]
    print(
        f"\nmulti_draft: {rate / 1e6:.2f} M candidates/s (goal >= {GOAL_RATE / 1e6:.0f}): "
        f"{'MET' if rate >= GOAL_RATE else 'NOT MET'}; cost per candidate {ratio:.2f}x the basic "
        f"variant (goal <= {GOAL_RATIO:.0f}x): {'MET' if ratio <= GOAL_RATIO else 'NOT MET'}"
    )


if __name__ == "__main__":
    main()
