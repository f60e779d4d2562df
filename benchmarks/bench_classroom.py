"""The class store under a class (issue 34): a projector and N phones, in-process and in Redis.

    python benchmarks/bench_classroom.py                   # 30 and 200 phones, every backend
    python benchmarks/bench_classroom.py --phones 30 --backends memory,redis

Each phone is a thread that joins the class, then polls the class's view every
``PHONE_POLL_S`` (as a phone's page does), answers each of :data:`QUESTIONS` questions once
when the projector asks it, and pools :data:`ROUNDS` rounds (in :data:`BATCHES` batches,
its own seed) into the experiment the projector opens. The projector (the teacher) asks
the questions one after another, refreshes its panel (view + tally, or view + pool) every
``REFRESH_S`` until every phone's answer (or every round) is counted, and reveals.

Backends: ``memory`` (the in-process store, every thread in this process); ``redis`` (one
process: the projector and the phones share one ResilientStore); ``redis x2`` (the
projector here, the phones split over two worker processes, each with its own store:
three replicas sharing one class through Redis). A ``redis-server`` is started on a free
loopback port (``benchmarks/redis_server.py``) and stopped at the end.

Printed per row: p50/p95 latency of each store operation, how long an answer took to show
on the projector (send -> first refresh that counts it; includes the refresh interval),
answers and rounds sent against counted, and memory: this process's RSS growth (psutil)
and Redis's ``used_memory``. Loopback only; it stops exactly the processes it started.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from redis_server import REDIS_SERVER, run_redis  # noqa: E402

from specdec_ui.runtime.classroom import Asked, MemoryClassStore, Throttled  # noqa: E402

QUESTIONS, ROUNDS, BATCHES = 5, 20, 2
VOCAB, MAX_LEN = 4, 4  # V = 4 tokens, K = 3 drafts a round
P_TARGET = np.array([0.4, 0.3, 0.2, 0.1])
P_LENGTH = np.array([0.0, 0.3, 0.3, 0.2, 0.2])  # rounds emitting 0..K+1 tokens
PHONE_POLL_S, REFRESH_S = 0.5, 1.0
POOL = "bench|V=4|K=3|rule=correct"
TIMEOUT_S = 120.0


def question(i: int) -> Asked:
    if i % 2 == 0:
        return Asked("Step_through_a_round", f"bench/{i}", "choice", choices=4)
    return Asked("Speedup_explorer", f"bench/{i}", "number", low=0.0, high=5.0)


@dataclass
class Stats:
    lat: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    sent: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    rounds: int = 0
    throttled: int = 0
    errors: list[str] = field(default_factory=list)

    def merge(self, other: dict) -> None:
        for k, v in other["lat"].items():
            self.lat[k] += v
        for k, v in other["sent"].items():
            self.sent[k] += v
        self.rounds += other["rounds"]
        self.throttled += other["throttled"]
        self.errors += other["errors"]

    def as_dict(self) -> dict:
        return {
            "lat": dict(self.lat),
            "sent": dict(self.sent),
            "rounds": self.rounds,
            "throttled": self.throttled,
            "errors": self.errors,
        }


class Timer:
    def __init__(self, stats: Stats, lock: threading.Lock) -> None:
        self.stats, self.lock = stats, lock

    def __call__(self, name: str, fn, *args):
        t0 = time.perf_counter()
        try:
            return fn(*args)
        finally:
            with self.lock:
                self.stats.lat[name].append(time.perf_counter() - t0)


def _send(timed: Timer, name: str, fn, *args) -> None:
    """Send once; after a Throttled, wait as told and send again (counted)."""
    while True:
        try:
            timed(name, fn, *args)
            return
        except Throttled as err:
            with timed.lock:
                timed.stats.throttled += 1
            time.sleep(err.wait_s)


def phone(st, code: str, seed: int, timed: Timer) -> None:
    """One phone: join, answer each asked question once, pool ROUNDS rounds once."""
    rng = np.random.default_rng(seed)
    me = timed("join", st.join, code)
    answered: set[str] = set()
    pooled = False
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline and not (len(answered) == QUESTIONS and pooled):
        view = timed("view (phone)", st.view, code)
        asked = view.asked
        if asked is not None and asked.question_id not in answered and not view.revealed:
            value = (
                int(rng.integers(asked.choices))
                if asked.kind == "choice"
                else round(float(rng.uniform(asked.low, asked.high)), 1)
            )
            _send(timed, "answer", st.answer, code, me, asked.question_id, value)
            with timed.lock:
                timed.stats.sent[asked.question_id].append(time.time())
            answered.add(asked.question_id)
        if view.pool_name == POOL and not pooled:
            for _ in range(BATCHES):
                lengths = rng.multinomial(ROUNDS // BATCHES, P_LENGTH)
                emitted = rng.multinomial(int(lengths @ np.arange(MAX_LEN + 1)), P_TARGET)
                _send(timed, "add_rounds", st.add_rounds, code, me, POOL, emitted, lengths)
                with timed.lock:
                    timed.stats.rounds += ROUNDS // BATCHES
                time.sleep(0.4)  # "Run 10 rounds" twice, as a student clicks
            pooled = True
        time.sleep(PHONE_POLL_S)


def run_phones(st, code: str, n: int, seed: int) -> Stats:
    stats, lock = Stats(), threading.Lock()
    timed = Timer(stats, lock)

    def one(i: int) -> None:
        try:
            phone(st, code, seed + i, timed)
        except Exception as err:  # noqa: BLE001 - reported in the table
            with lock:
                stats.errors.append(f"{type(err).__name__}: {err}")

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT_S + 30)
    return stats


def _poll_until(timed: Timer, read, done, polls: list[tuple[float, int]]) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        count = timed("projector refresh", read)
        polls.append((time.time(), count))
        if done(count):
            return
        time.sleep(REFRESH_S)
    with timed.lock:
        timed.stats.errors.append(f"projector: not every phone counted within {TIMEOUT_S:.0f} s")


def projector(st, n: int, code: str, key: str, stats: Stats) -> dict:
    """The teacher's side: wait for the class, ask, watch, reveal; open the pool, watch."""
    timed = Timer(stats, threading.Lock())
    polls: dict[str, list[tuple[float, int]]] = {}
    _poll_until(timed, lambda: st.view(code).students, lambda c: c >= n, [])
    for i in range(QUESTIONS):
        asked = question(i)
        timed("ask", st.ask, code, key, asked)
        qid = asked.question_id

        def read(qid=qid) -> int:
            st.view(code)
            return sum(st.tally(code, qid).values())

        polls[qid] = []
        _poll_until(timed, read, lambda c: c >= n, polls[qid])
        timed("reveal", st.reveal, code, key)
    timed("set_pool", st.set_pool, code, key, POOL, VOCAB, MAX_LEN)

    def read_pool() -> int:
        st.view(code)
        return st.pool(code, POOL).rounds

    _poll_until(timed, read_pool, lambda c: c >= n * ROUNDS, [])
    return polls


def shown_after(sent: list[float], polls: list[tuple[float, int]]) -> list[float]:
    """Seconds from each answer's send to the first refresh whose count includes it
    (answers taken in the order they were sent)."""
    lags = []
    for i, t in enumerate(sorted(sent)):
        seen = next((tp for tp, count in polls if count >= i + 1 and tp >= t), None)
        if seen is not None:
            lags.append(seen - t)
    return lags


def worker_main(url: str, code: str, n: int, seed: int) -> None:
    """A replica of its own (a subprocess): n phones with their own store; JSON on stdout."""
    from specdec_ui.runtime.classroom_redis import ResilientStore

    print(json.dumps(run_phones(ResilientStore(url), code, n, seed).as_dict()))


def _spawn(url: str, code: str, n: int, seed: int) -> subprocess.Popen:
    cmd = [sys.executable, __file__, "--worker", url, code, str(n), str(seed)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, cwd=ROOT, text=True)


def scenario(backend: str, n: int, url: str | None) -> dict:
    """One row: a lesson with n phones on ``backend`` ("memory", "redis", "redis x2")."""
    if backend == "memory":
        st = MemoryClassStore()
    else:
        from specdec_ui.runtime.classroom_redis import ResilientStore

        st = ResilientStore(url)
    rss0 = psutil.Process().memory_info().rss
    code, key = st.start()
    phones = Stats()
    t0 = time.perf_counter()
    if backend == "redis x2":
        workers = [_spawn(url, code, n // 2, 1000), _spawn(url, code, n - n // 2, 5000)]
        teacher = Stats()
        polls = projector(st, n, code, key, teacher)
        for w in workers:
            out, _ = w.communicate(timeout=TIMEOUT_S + 60)
            phones.merge(json.loads(out))
    else:
        got: list[Stats] = []
        runner = threading.Thread(target=lambda: got.append(run_phones(st, code, n, 1000)))
        runner.start()
        teacher = Stats()
        polls = projector(st, n, code, key, teacher)
        runner.join()
        phones = got[0]
    wall = time.perf_counter() - t0
    counted = sum(sum(st.tally(code, question(i).question_id).values()) for i in range(QUESTIONS))
    pooled = st.pool(code, POOL).rounds
    lags = [lag for qid, p in polls.items() for lag in shown_after(phones.sent[qid], p)]
    row = {
        "backend": backend,
        "phones": n,
        "wall_s": wall,
        "lat": {**phones.lat, **teacher.lat, "answer shown on projector": lags},
        "answers_sent": sum(len(v) for v in phones.sent.values()),
        "answers_counted": counted,
        "rounds_sent": phones.rounds,
        "rounds_pooled": pooled,
        "throttled": phones.throttled,
        "errors": phones.errors + teacher.errors,
        "rss_growth_mb": (psutil.Process().memory_info().rss - rss0) / 2**20,
        "store": st.view(code).backend,
    }
    if backend != "memory":
        row["redis_mb"] = st.primary.r.info("memory")["used_memory"] / 2**20
    st.end(code, key)
    return row


def _ms(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ms = 1000 * float(np.quantile(values, q))
    return f"{ms:.1f}" if ms < 10 else f"{ms:.0f}"


def print_table(rows: list[dict]) -> None:
    ops = ["join", "view (phone)", "answer", "add_rounds", "projector refresh"]
    ops += ["answer shown on projector"]
    print("\nLatency per operation, ms (p50 / p95)\n")
    print("| backend | phones | " + " | ".join(ops) + " |")
    print("|---|---:|" + "---:|" * len(ops))
    for r in rows:
        cells = [
            f"{_ms(r['lat'].get(op, []), 0.5)} / {_ms(r['lat'].get(op, []), 0.95)}" for op in ops
        ]
        print(f"| {r['backend']} | {r['phones']} | " + " | ".join(cells) + " |")
    print("\nCounts and memory\n")
    print("| backend | phones | lesson s | answers sent / counted | rounds sent / pooled "
          "| throttled | errors | RSS growth MB | Redis used MB | store at the end |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        redis_mb = f"{r['redis_mb']:.1f}" if "redis_mb" in r else "-"
        print(
            f"| {r['backend']} | {r['phones']} | {r['wall_s']:.1f} | {r['answers_sent']} / "
            f"{r['answers_counted']} | {r['rounds_sent']} / {r['rounds_pooled']} | "
            f"{r['throttled']} | {len(r['errors'])} | {r['rss_growth_mb']:.1f} | {redis_mb} | "
            f"{r['store'][:60]} |"
        )
    for r in rows:
        for err in sorted(set(r["errors"]))[:3]:
            print(f"error ({r['backend']}, {r['phones']}): {err}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--phones", default="30,200", help="comma-separated class sizes")
    parser.add_argument("--backends", default="memory,redis,redis x2")
    parser.add_argument("--worker", nargs=4, metavar=("URL", "CODE", "N", "SEED"))
    args = parser.parse_args()
    if args.worker:
        url, code, n, seed = args.worker
        worker_main(url, code, int(n), int(seed))
        return 0
    sizes = [int(x) for x in args.phones.split(",")]
    backends = [b.strip() for b in args.backends.split(",")]
    rows = []
    needs_redis = any(b != "memory" for b in backends)
    if needs_redis and not REDIS_SERVER.exists():
        print(f"{REDIS_SERVER} not found: install Debian's redis-server")
        return 1
    with run_redis() if needs_redis else _nothing() as server:
        for backend in backends:
            for n in sizes:
                rows.append(scenario(backend, n, server.url if server else None))
                print(f"done: {backend}, {n} phones", file=sys.stderr)
    print_table(rows)
    lost = [r for r in rows if r["answers_sent"] != r["answers_counted"] or r["errors"]]
    lost += [r for r in rows if r["rounds_sent"] != r["rounds_pooled"]]
    return 1 if lost else 0


class _nothing:  # noqa: N801 - a null context manager yielding None
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    raise SystemExit(main())
