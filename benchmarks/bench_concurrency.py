"""30 generations at once: threads (as Streamlit sessions), one worker queue, a process pool.

    python benchmarks/bench_concurrency.py                 # about 1 minute on 2 cores
    python benchmarks/bench_concurrency.py --jobs 30 --tokens 60

The Model pair lab's generation (``specdec_ui.model_pairs.work.compute_run``: a speculative run
without the step-mode trace, and the greedy check) for ``--jobs`` different seeds at the
page's defaults, three ways:

- **threads**: one thread per job, all at once (what 30 Streamlit sessions did before);
- **queue**: the jobs through ``specdec_ui.runtime.shared_work`` (one worker thread, FIFO);
- **pool**: ``concurrent.futures.ProcessPoolExecutor`` with 2 processes (each loads the
  models once; the request is pickled to the worker: acceptable in a benchmark, not for
  students' prompts in the app).

Printed: wall time, jobs per second, this process's user and system CPU (the pool's
workers count in their own processes: their CPU is added from ``psutil``).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from specdec_ui.model_pairs import work as model_pairs_work  # noqa: E402
from specdec_ui.runtime.shared_work import SharedWork  # noqa: E402


def job(seed: int, tokens: int):
    return len(
        model_pairs_work.compute_run(
            model_pairs_work.RunRequest(
                pair=model_pairs_work.DEFAULT_PAIR,
                prompt=model_pairs_work.DEFAULT_PROMPT,
                k=model_pairs_work.DEFAULT_K,
                temperature=0.0,
                n_tokens=tokens,
                seed=seed,
            ),
            trace=False,
        ).spec.tokens
    )


def _warm(_: int) -> int:
    return job(0, 10)


def run_threads(seeds, tokens) -> None:
    threads = [threading.Thread(target=job, args=(s, tokens)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def run_queue(seeds, tokens) -> None:
    work = SharedWork(workers=1, poll_s=0.02)
    threads = [
        threading.Thread(target=work.shared_result, args=("b", s, lambda s=s: job(s, tokens)))
        for s in seeds
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def run_pool(seeds, tokens, pool) -> None:
    list(pool.map(job, seeds, [tokens] * len(seeds)))


def measure(name, fn, procs) -> tuple:
    before = [p.cpu_times() for p in procs]
    start = time.perf_counter()
    fn()
    wall = time.perf_counter() - start
    after = [p.cpu_times() for p in procs]
    user = sum(a.user - b.user for a, b in zip(after, before, strict=True))
    system = sum(a.system - b.system for a, b in zip(after, before, strict=True))
    return name, wall, user, system


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=30)
    parser.add_argument("--tokens", type=int, default=60)
    args = parser.parse_args(argv)
    if not (1 <= args.jobs <= 200 and 10 <= args.tokens <= 200):
        parser.error("--jobs 1..200, --tokens 10..200")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _warm(0)  # load the models in this process
    seeds = list(range(1, args.jobs + 1))
    me = psutil.Process()
    rows = [
        measure("threads (one per job)", lambda: run_threads(seeds, args.tokens), [me]),
        measure("queue (1 worker thread)", lambda: run_queue(seeds, args.tokens), [me]),
    ]
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_warm, range(2)))  # each worker loads the models once
        workers = [psutil.Process(p.pid) for p in pool._processes.values()]  # noqa: SLF001
        rows.append(
            measure(
                "pool (2 processes)", lambda: run_pool(seeds, args.tokens, pool), [me, *workers]
            )
        )
    print(
        f"\n{args.jobs} generations, {args.tokens} tokens, load average {os.getloadavg()[0]:.1f}\n"
    )
    print("| way | wall (s) | jobs/s | CPU user (s) | CPU system (s) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, wall, user, system in rows:
        print(f"| {name} | {wall:.1f} | {args.jobs / wall:.2f} | {user:.1f} | {system:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
