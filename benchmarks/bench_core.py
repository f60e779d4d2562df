"""Speed of specdec_core, printed as a table (issue 2's goals).

Run: python benchmarks/bench_core.py [--rounds N]

All ratios come from one run on the same machine (it is shared and noisy):
each timing is the best of several repeats, interleaved.
- simulate_rounds (vectorised) against a plain Python loop of verify_round on
  the same work (draft positions per second), K = 4, V = 5;
- the simulation time as a multiple of just drawing its uniforms (two per
  draft position: the draft token and the coin) with the same generator;
- one verify_round call; the theory functions over the speedup page's
  200 x 64 (alpha x K) grid.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere
import specdec_core as sc  # noqa: E402
from benchmarks.common import best_of  # noqa: E402

P = np.array([0.40, 0.25, 0.20, 0.10, 0.05])
Q = np.array([0.30, 0.30, 0.15, 0.15, 0.10])
K = 4


def loop_of_verify_round(n_rounds: int, rng: np.random.Generator) -> None:
    p_rows, q_rows = sc.broadcast_rows(P, Q, K)
    for _ in range(n_rounds):
        sc.verify_round(p_rows, q_rows, sc.draft_from(q_rows, rng), rng=rng)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1_000_000, help="simulated rounds")
    parser.add_argument("--loop-rounds", type=int, default=2_000, help="rounds of the slow loop")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    positions = args.rounds * K

    t_sim = best_of(lambda: sc.simulate_rounds(P, Q, K, args.rounds, rng=rng))
    t_uniforms = best_of(lambda: rng.random(2 * positions))
    t_loop = best_of(lambda: loop_of_verify_round(args.loop_rounds, rng), repeats=3)
    loop_rate = args.loop_rounds * K / t_loop
    sim_rate = positions / t_sim
    p_rows, q_rows = sc.broadcast_rows(P, Q, K)
    t_round = best_of(lambda: sc.verify_round(p_rows, q_rows, [0, 1, 2, 3], rng=rng), 200)

    alpha = np.linspace(0, 1, 200)[:, None]
    ks = np.arange(1, 65)[None, :]
    t_grid = best_of(lambda: sc.speedup(alpha, ks, 1.0, 20.0), 50)
    t_tokens = best_of(lambda: sc.expected_tokens(alpha, ks), 50)
    t_opt = best_of(lambda: sc.optimal_k(alpha[:, 0], 1.0, 20.0, k_max=64), 50)

    rows = [
        (
            "simulate_rounds, K=4, V=5",
            f"{args.rounds:,} rounds",
            f"{t_sim * 1e3:8.1f} ms",
            f"{sim_rate / 1e6:6.1f} M positions/s",
        ),
        (
            "loop of verify_round (same work)",
            f"{args.loop_rounds:,} rounds",
            f"{t_loop * 1e3:8.1f} ms",
            f"{loop_rate / 1e6:6.3f} M positions/s",
        ),
        ("  -> vectorised / loop", "", "", f"{sim_rate / loop_rate:8.0f} x"),
        (
            "draw 2 uniforms per position",
            f"{2 * positions:,} uniforms",
            f"{t_uniforms * 1e3:8.1f} ms",
            f"{2 * positions / t_uniforms / 1e6:6.0f} M uniforms/s",
        ),
        ("  -> simulation / uniforms", "", "", f"{t_sim / t_uniforms:8.1f} x"),
        ("one verify_round, K=4", "", f"{t_round * 1e6:8.1f} us", ""),
        ("speedup over 200 x 64 grid", "", f"{t_grid * 1e3:8.3f} ms", ""),
        ("expected_tokens over 200 x 64 grid", "", f"{t_tokens * 1e3:8.3f} ms", ""),
        ("optimal_k for 200 alphas, k_max=64", "", f"{t_opt * 1e3:8.3f} ms", ""),
    ]
    print(f"{'what':38} {'size':>22} {'time':>11}  rate")
    print("-" * 96)
    for name, size, t, rate in rows:
        print(f"{name:38} {size:>22} {t:>11}  {rate}")
    print("\nGoals: vectorised >= 100x the loop; >= 20 M positions/s; simulation <= 8x uniforms.")


if __name__ == "__main__":
    main()
