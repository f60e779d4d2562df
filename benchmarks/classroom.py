"""Classroom scenarios for the load client (``load_test.py --scenario classroom``).

Each scenario plays many students over Streamlit's websocket protocol against one server
and measures latency from sending a rerun to receiving ``script_finished`` (checked for
content and for an exception element), the server's peak resident memory (sampled every
0.1 s), and the server's user and system CPU time over the scenario:

- ``open``: 30 students open the Model pair lab at once (on a fresh server, then again
  on the warm server); goal p95 < 3 s;
- ``same_k``: those 30 set K = 4 at once; goal p95 < 2 s;
- ``new_seed``: each of the 30 has its own seed and presses New seed at once, while 5
  other students click through the Round page; goal p95 < 6 s and the Round page's
  p95 < 1 s meanwhile. At the page's default T = 0 a run draws no random number, so the
  30 seeds share one run; the extra row after it moves all 30 to T = 1, where each seed is
  a different run (no goal of its own: compare it with New seed's);
- ``monte_carlo``: 30 students open the Losslessness lab at its largest Monte Carlo
  (500,000 rounds, K = 8) with 30 different seeds; goal p95 < 5 s, peak RSS < 700 MB;
- ``hall``: N students (5, then 200) arrive over 30 s, half on the Round page and half on
  the Model pair lab; each opens its page, waits 0-5 s and presses once (Next / New seed)
  while a probe asks ``/_stcore/health`` every 0.5 s (timeout 1 s); goals: every probe
  answers within 1 s, Round page p95 < 2 s, Model pair lab p95 < 15 s, and the
  Model pair lab's runs per second at 200 not below those at 5.

Loopback only; every loop is bounded.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
import urllib.request
from dataclasses import dataclass, field

import psutil
from streamlit_ws import RunResult, StreamlitSession

LAB_PAGE, ROUND_PAGE, MC_PAGE = "Model_pair_lab", "Step_through_a_round", "Losslessness_lab"
LAB_OK = "Tokens per round"  # a metric label of the Model pair lab
MC_OK = "kept / checked (simulated)"
ROUND_QUERY = "mode=preset&preset=000-round"
N_CLASS = 30


@dataclass
class Row:
    """One line of the printed table."""

    name: str
    goal: str
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    peak_rss: float = float("nan")
    cpu_user: float = float("nan")
    cpu_sys: float = float("nan")
    extra: str = ""

    def record(self, result: RunResult, expect: str | None) -> bool:
        ok, why = result.ok, result.status
        if ok and expect is not None and expect not in result.text():
            ok, why = False, f"expected {expect!r} in the page"
        if ok:
            self.latencies.append(result.latency_s)
        else:
            self.failures.append(why)
        return ok


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class ServerWatch:
    """Samples the server's RSS every 0.1 s and its CPU times at start and stop."""

    def __init__(self, pid: int | None):
        self.proc = psutil.Process(pid) if pid else None
        self.peak = float("nan")
        self._task = None

    def _rss(self) -> float:
        try:
            return self.proc.memory_info().rss / 2**20 if self.proc else float("nan")
        except psutil.Error:
            return float("nan")

    def _times(self):
        try:
            return self.proc.cpu_times() if self.proc else None
        except psutil.Error:
            return None

    async def _sample(self) -> None:
        while True:
            rss = self._rss()
            if rss == rss:
                self.peak = rss if self.peak != self.peak else max(self.peak, rss)
            await asyncio.sleep(0.1)

    def start(self) -> None:
        self.t0 = self._times()
        self._task = asyncio.ensure_future(self._sample())

    def stop(self, row: Row) -> None:
        if self._task is not None:
            self._task.cancel()
        t1 = self._times()
        row.peak_rss = self.peak
        if self.t0 is not None and t1 is not None:
            row.cpu_user, row.cpu_sys = t1.user - self.t0.user, t1.system - self.t0.system


async def _connect(url: str, row: Row, timeout_s: float) -> StreamlitSession | None:
    session = StreamlitSession(url, timeout_s=timeout_s)
    try:
        await session.connect()
        return session
    except (OSError, TimeoutError) as err:
        row.failures.append(f"connect: {err}")
        return None


async def _wave(url, pid, row: Row, sessions, action, expect) -> None:
    """Every session runs ``action(session, i)`` at once; results go to ``row``."""
    watch = ServerWatch(pid)
    watch.start()
    start = time.perf_counter()
    results = await asyncio.gather(*(action(s, i) for i, s in enumerate(sessions)))
    row.wall_s = time.perf_counter() - start
    watch.stop(row)
    for result in results:
        row.record(result, expect)


async def open_class(url, pid, name, timeout_s) -> tuple[Row, list[StreamlitSession]]:
    row = Row(name, "p95 < 3 s")
    sessions = [await _connect(url, row, timeout_s) for _ in range(N_CLASS)]
    sessions = [s for s in sessions if s is not None]
    await _wave(url, pid, row, sessions, lambda s, i: s.open_page(LAB_PAGE), LAB_OK)
    return row, sessions


async def same_k(url, pid, sessions) -> Row:
    row = Row("30 set K = 4 at once", "p95 < 2 s")
    await _wave(url, pid, row, sessions, lambda s, i: s.set_slider("lm_k", 4), LAB_OK)
    return row


async def _round_clicker(url, row: Row, stop: asyncio.Event, timeout_s: float) -> None:
    """A student on the Round page: a fresh tab per round, Next every 0.3 s, until ``stop``."""
    for _ in range(1_000):
        if stop.is_set():
            return
        session = await _connect(url, row, timeout_s)
        if session is None:
            return
        try:
            row.record(await session.open_page(ROUND_PAGE, ROUND_QUERY), "Step 1 of")
            for step in range(2, 10):
                if stop.is_set():
                    return
                await asyncio.sleep(0.3)
                row.record(await session.click("round_next"), f"Step {step} of")
        finally:
            await session.close()


async def new_seed(url, pid, sessions, timeout_s) -> tuple[Row, Row]:
    row = Row("30 press New seed (30 different seeds)", "p95 < 6 s")
    other = Row("  meanwhile: 5 students on the Round page", "p95 < 1 s")
    for i, s in enumerate(sessions):  # a different seed in every tab, before the wave
        other.record(await s.set_value("lm_seed", "int_value", 1000 * (i + 1)), None)
    other.latencies.clear()
    other.failures.clear()
    warm = await _connect(url, other, timeout_s)  # the Round page's first import is not
    if warm is not None:  # what "responsive meanwhile" measures (the hall rows cover it)
        await warm.open_page(ROUND_PAGE, ROUND_QUERY)
        await warm.close()
    stop = asyncio.Event()
    clickers = [
        asyncio.ensure_future(_round_clicker(url, other, stop, timeout_s)) for _ in range(5)
    ]
    await asyncio.sleep(2.0)
    n_before = len(other.latencies)
    await _wave(url, pid, row, sessions, lambda s, i: s.click("lm_new_seed"), LAB_OK)
    stop.set()
    await asyncio.gather(*clickers)
    other.latencies = other.latencies[n_before:]  # only the reruns during the wave (and a tail)
    return row, other


async def new_seed_sampled(url, pid, sessions) -> Row:
    """At T = 0 every seed gives the same run (shared); at T = 1 each seed is new work."""
    row = Row("30 move T to 1 at once (30 different seeds: 30 different runs)", "none (extra)")
    await _wave(url, pid, row, sessions, lambda s, i: s.set_slider("lm_temperature", 1.0), LAB_OK)
    return row


async def monte_carlo(url, pid, timeout_s) -> Row:
    row = Row("30 run the largest Monte Carlo (500,000 rounds, K = 8)", "p95 < 5 s, RSS < 700 MB")
    sessions = [await _connect(url, row, timeout_s) for _ in range(N_CLASS)]
    sessions = [s for s in sessions if s is not None]

    def action(s, i):
        return s.open_page(MC_PAGE, f"k=8&rounds=500000&seed={i + 1}")

    await _wave(url, pid, row, sessions, action, MC_OK)
    for s in sessions:
        await s.close()
    return row


async def _probe(url: str, stop: asyncio.Event, times: list[float], fails: list[str]) -> None:
    loop = asyncio.get_running_loop()

    def once() -> float:
        start = time.perf_counter()
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1.0) as resp:
            resp.read()
        return time.perf_counter() - start

    while not stop.is_set():
        try:
            latency = await loop.run_in_executor(None, once)
            times.append(latency)
            if latency > 1.0:
                fails.append(f"health answered in {latency:.1f} s")
        except OSError as err:
            fails.append(f"health: {err}")
        await asyncio.sleep(0.5)


async def hall(url, pid, n: int, seed: int, timeout_s: float) -> tuple[Row, Row, Row]:
    rng = random.Random(seed)
    round_row = Row(f"hall of {n}: Round page (open + Next)", "p95 < 2 s")
    lab_row = Row(f"hall of {n}: Model pair lab (open + New seed)", "p95 < 15 s")
    health = Row(f"hall of {n}: health probes", "all < 1 s")
    stop = asyncio.Event()
    probe_fails: list[str] = []

    async def student(i: int, delay: float, wait: float) -> None:
        await asyncio.sleep(delay)
        on_lab = i % 2 == 1
        row = lab_row if on_lab else round_row
        session = await _connect(url, row, timeout_s)
        if session is None:
            return
        try:
            if on_lab:
                opened = await session.open_page(LAB_PAGE, f"seed={rng.randrange(10**6)}")
                if row.record(opened, LAB_OK):
                    await asyncio.sleep(wait)
                    row.record(await session.click("lm_new_seed"), LAB_OK)
            else:
                if row.record(await session.open_page(ROUND_PAGE, ROUND_QUERY), "Step 1 of"):
                    await asyncio.sleep(wait)
                    row.record(await session.click("round_next"), "Step 2 of")
        finally:
            await session.close()

    watch = ServerWatch(pid)
    watch.start()
    probe = asyncio.ensure_future(_probe(url, stop, health.latencies, probe_fails))
    start = time.perf_counter()
    plan = [(i, rng.uniform(0, 30.0), rng.uniform(0, 5.0)) for i in range(n)]
    await asyncio.gather(*(student(*p) for p in plan))
    wall = time.perf_counter() - start
    stop.set()
    await probe
    for row in (round_row, lab_row, health):
        row.wall_s = wall
        watch.stop(row)
    health.failures = probe_fails
    lab_runs = len(lab_row.latencies)
    lab_row.extra = f"{lab_runs / wall:.2f} runs/s"
    return round_row, lab_row, health


def print_rows(rows: list[Row]) -> None:
    print(
        "| scenario | goal | runs | failed | median (s) | p95 (s) | max (s) | peak RSS (MB) "
        "| server CPU user / sys (s) | note |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        lat = r.latencies
        med = statistics.median(lat) if lat else float("nan")
        print(
            f"| {r.name} | {r.goal} | {len(lat) + len(r.failures)} | {len(r.failures)} | "
            f"{med:.2f} | {pct(lat, 0.95):.2f} | {max(lat) if lat else float('nan'):.2f} | "
            f"{r.peak_rss:.0f} | {r.cpu_user:.1f} / {r.cpu_sys:.1f} | {r.extra} |"
        )
    for r in rows:
        if r.failures:
            print(f"  {r.name}: {len(r.failures)} failed, e.g. {sorted(set(r.failures))[:4]}")


async def run_classroom(
    url: str, pid: int | None, only: set[str], seed: int, hall_sizes: tuple[int, int] = (5, 200)
) -> list[Row]:
    """The scenarios named in ``only`` (all by default), in order; the rows to print."""
    timeout_s = 120.0
    rows: list[Row] = []
    sessions: list[StreamlitSession] = []
    if only & {"open", "same_k", "new_seed"}:
        row, sessions = await open_class(url, pid, "30 open the Model pair lab (fresh)", timeout_s)
        rows.append(row)
        for s in sessions:
            await s.close()
        row, sessions = await open_class(url, pid, "30 open the Model pair lab (warm)", timeout_s)
        rows.append(row)
    if "same_k" in only:
        rows.append(await same_k(url, pid, sessions))
    if "new_seed" in only:
        rows.extend(await new_seed(url, pid, sessions, timeout_s))
        rows.append(await new_seed_sampled(url, pid, sessions))
    for s in sessions:
        await s.close()
    if "monte_carlo" in only:
        rows.append(await monte_carlo(url, pid, timeout_s))
    if "hall" in only:
        small = await hall(url, pid, hall_sizes[0], seed, timeout_s)
        big = await hall(url, pid, hall_sizes[1], seed + 1, timeout_s)
        rows.extend([*small, *big])
        rate = [float(r.extra.split()[0]) for r in (small[1], big[1])]
        big[1].extra += f" (at {hall_sizes[0]}: {rate[0]:.2f})"
    return rows
