"""A classroom of students against one Streamlit server, over Streamlit's own websocket protocol.

    python benchmarks/load_test.py                      # starts its own server, N = 10, 30, 60
    python benchmarks/load_test.py --students 30 --soak 0
    python benchmarks/load_test.py --url http://127.0.0.1:8501 --pid 1234
    python benchmarks/load_test.py --scenario classroom      # benchmarks/classroom.py, ~6 min
    python benchmarks/load_test.py --scenario classroom --only open,same_k
    python benchmarks/load_test.py --scenario class --phones 30,200   # benchmarks/class_load.py

Each simulated student opens the "Step through a round" page with seed 000's
preset, clicks Next through the whole round (8 clicks), switches to the
"Speedup explorer" and moves the alpha and K sliders (6 moves): 16 reruns,
each one a real script run on the server (the client checks the page content
that comes back: the step heading after each click, the emitted tokens at the
end, the best K after each slider move). Students arrive over 2 s and think
between clicks (uniform 2-6 s by default, seeded); two more rows repeat N = 30
with frantic clicking (0.5-2 s) and with no thinking at all (the server's capacity).

Printed: rerun latency (median, p95, max), reruns per second, failed reruns, and
the server's resident memory before and after each level; then a soak of 1,000
reruns by students that come and go (one session per cycle), with the memory
sampled every 100 reruns, to show that memory stays flat (no per-session growth).

Loopback only; every loop is bounded in count and in time (``--time-limit``),
and the script stops the server it started (by its PID). The soak (and the classroom
scenarios) fail when the server's log holds a Python traceback (``--log`` names the log of
a server given by ``--url``).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from classroom import print_rows, run_classroom  # noqa: E402
from local_server import free_port, start_server, stop_server, wait_healthy  # noqa: E402
from streamlit_ws import RunResult, StreamlitSession, check_loopback  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ROUND_PAGE, SPEED_PAGE = "Step_through_a_round", "Speedup_explorer"
ROUND_QUERY = "mode=preset&preset=000-round"
ROUND_STEPS = 9  # seed 000's round: draft, 3 x (ratio, coin), bonus, result
FINAL_OUTPUT = "A ✓ kept · B ✓ kept · C ✓ kept · D ★ bonus"
RERUNS_PER_CYCLE = 1 + (ROUND_STEPS - 1) + 1 + 6
MAX_CYCLES = 1_000  # hard bound on any loop below


@dataclass
class Level:
    name: str
    students: int
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    rss_before: float = float("nan")
    rss_after: float = float("nan")
    cpu_s: float = float("nan")  # server CPU time (user + system) spent during the level
    bytes_in: int = 0

    @property
    def reruns(self) -> int:
        return len(self.latencies) + len(self.failures)


class Student:
    """One student: a browser tab that clicks through the round page and the sliders."""

    def __init__(
        self,
        url: str,
        rng: random.Random,
        think: tuple[float, float],
        deadline: float,
        level: Level,
    ):
        self.url, self.rng, self.think, self.deadline, self.level = url, rng, think, deadline, level

    async def pause(self) -> None:
        lo, hi = self.think
        if hi > 0:
            await asyncio.sleep(self.rng.uniform(lo, hi))

    def record(self, result: RunResult, expect: str | None = None) -> bool:
        ok = result.ok
        why = result.status
        if ok and expect is not None and expect not in result.text():
            ok, why = False, f"expected {expect!r} in the page"
        self.level.bytes_in += result.n_bytes
        if ok:
            self.level.latencies.append(result.latency_s)
        else:
            self.level.failures.append(why)
        return ok

    async def cycle(self) -> bool:
        """One visit: 16 reruns. Returns False when something failed (the tab gives up)."""
        session = StreamlitSession(self.url)
        try:
            await session.connect()
        except (OSError, TimeoutError) as err:
            self.level.failures.append(f"connect: {err}")
            return False
        try:
            r = await session.open_page(ROUND_PAGE, ROUND_QUERY)
            if not self.record(r, f"Step 1 of {ROUND_STEPS}"):
                return False
            for step in range(2, ROUND_STEPS + 1):
                if time.monotonic() > self.deadline:
                    return False
                await self.pause()
                r = await session.click("round_next")
                if not self.record(r, f"Step {step} of {ROUND_STEPS}"):
                    return False
            if FINAL_OUTPUT not in r.text():
                self.level.failures.append("the round did not end with A B C + bonus D")
                return False
            await self.pause()
            r = await session.open_page(SPEED_PAGE)
            if not self.record(r, "Best K = "):
                return False
            k_max = int(session.slider_max.get("speed_k", 8))
            moves = [
                ("speed_alpha", 0.0, "Best K = 1 "),
                ("speed_alpha", 1.0, f"Best K = {k_max} "),
                ("speed_alpha", round(self.rng.uniform(0.3, 0.95), 2), "Best K = "),
                ("speed_k", self.rng.randint(1, 8), "Best K = "),
                ("speed_alpha", round(self.rng.uniform(0.3, 0.95), 2), "Best K = "),
                ("speed_k", self.rng.randint(1, 8), "speedup at K = "),
            ]
            for key, value, expect in moves:
                if time.monotonic() > self.deadline:
                    return False
                await self.pause()
                r = await session.set_slider(key, value)
                if key == "speed_k":
                    expect = f"speedup at K = {value}"
                if not self.record(r, expect):
                    return False
            return True
        finally:
            await session.close()

    async def run(self, cycles: int, start_delay: float) -> None:
        await asyncio.sleep(start_delay)
        for _ in range(min(cycles, MAX_CYCLES)):
            if time.monotonic() > self.deadline or not await self.cycle():
                return


# ----------------------------------------------------------------------------- server
def cpu_s(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    try:
        times = psutil.Process(pid).cpu_times()
        return times.user + times.system
    except psutil.Error:
        return float("nan")


def rss_mb(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    try:
        return psutil.Process(pid).memory_info().rss / 2**20
    except psutil.Error:
        return float("nan")


# ----------------------------------------------------------------------------- runs
async def run_level(
    url: str,
    pid: int | None,
    name: str,
    n: int,
    cycles: int,
    think: tuple[float, float],
    seed: int,
    time_limit: float,
) -> Level:
    level = Level(name, n)
    await asyncio.sleep(1.0)  # let the previous level's sessions close
    level.rss_before = rss_mb(pid)
    deadline = time.monotonic() + time_limit
    rng = random.Random(seed)
    students = [
        Student(url, random.Random(rng.getrandbits(64)), think, deadline, level) for _ in range(n)
    ]
    cpu0, start = cpu_s(pid), time.perf_counter()
    await asyncio.gather(*(s.run(cycles, rng.uniform(0, 2.0)) for s in students))
    level.wall_s = time.perf_counter() - start
    level.cpu_s = cpu_s(pid) - cpu0
    await asyncio.sleep(1.0)
    level.rss_after = rss_mb(pid)
    return level


async def run_soak(
    url: str, pid: int | None, total: int, concurrent: int, seed: int, time_limit: float
) -> tuple[Level, list[tuple[int, int, float]]]:
    """``total`` reruns by ``concurrent`` students who leave after each visit.

    Memory is sampled every 100 reruns: (reruns done, sessions opened, RSS MB).
    """
    level = Level(f"soak {total}", concurrent)
    deadline = time.monotonic() + time_limit
    rng = random.Random(seed)
    samples = [(0, 0, rss_mb(pid))]
    level.rss_before = samples[0][2]
    sessions = 0

    async def visitor() -> None:
        nonlocal sessions
        student = Student(url, random.Random(rng.getrandbits(64)), (0.0, 0.0), deadline, level)
        for _ in range(MAX_CYCLES):
            if level.reruns >= total or time.monotonic() > deadline:
                return
            sessions += 1
            if not await student.cycle():
                return

    async def sampler() -> None:
        next_mark = 100
        while level.reruns < total and time.monotonic() < deadline:
            if level.reruns >= next_mark:
                samples.append((level.reruns, sessions, rss_mb(pid)))
                next_mark += 100
            await asyncio.sleep(0.05)

    cpu0, start = cpu_s(pid), time.perf_counter()
    await asyncio.gather(sampler(), *(visitor() for _ in range(concurrent)))
    level.wall_s = time.perf_counter() - start
    level.cpu_s = cpu_s(pid) - cpu0
    await asyncio.sleep(1.0)
    level.rss_after = rss_mb(pid)
    samples.append((level.reruns, sessions, level.rss_after))
    return level, samples


ANSI = re.compile(r"\x1b\[[0-9;]*m")
BOX = " │─╭╮╰╯┃━"  # rich's traceback frame (Streamlit logs a script's error with rich)


def tracebacks(log: Path | None) -> list[str]:
    """The error line of each traceback in the server log ([] without a log): plain Python
    tracebacks ("Traceback (most recent call last):") and rich's framed ones (colour codes
    stripped), which is how Streamlit 1.67 logs an exception in a script."""
    if log is None or not log.exists():
        return []
    lines = [ANSI.sub("", x) for x in log.read_text(errors="replace").splitlines()]
    found = []
    for i, line in enumerate(lines):
        if line.startswith("Traceback") or ("Traceback (most recent call last)" in line):
            tail = next(
                (
                    x
                    for x in lines[i + 1 :]
                    if x.strip() and x[0] not in BOX and "Traceback" not in x
                ),
                "",
            )
            found.append(tail[:200])
    return found


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def print_levels(levels: list[Level]) -> None:
    print(
        "| students | reruns | failed | median (ms) | p95 (ms) | max (ms) | reruns/s "
        "| server CPU per rerun (ms) | RSS before (MB) | RSS after (MB) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for lv in levels:
        lat = [x * 1000 for x in lv.latencies]
        print(
            f"| {lv.name} | {lv.reruns} | {len(lv.failures)} | "
            f"{statistics.median(lat) if lat else float('nan'):.0f} | {pct(lat, 0.95):.0f} | "
            f"{max(lat) if lat else float('nan'):.0f} | {lv.reruns / lv.wall_s:.1f} | "
            f"{1000 * lv.cpu_s / max(lv.reruns, 1):.0f} | "
            f"{lv.rss_before:.0f} | {lv.rss_after:.0f} |"
        )
    for lv in levels:
        if lv.failures:
            kinds = sorted(set(lv.failures))[:5]
            print(f"  {lv.name}: {len(lv.failures)} failed reruns, e.g. {kinds}")


def checked_args(parser: argparse.ArgumentParser, args) -> tuple[list[int], tuple]:
    """(class sizes, think range) from the arguments; parser.error on a bad value."""
    levels_n = [int(x) for x in args.students.split(",") if x.strip()]
    think = tuple(float(x) for x in args.think.split(","))
    if len(think) != 2 or not 0 <= think[0] <= think[1] <= 60:
        parser.error("--think takes two numbers lo,hi with 0 <= lo <= hi <= 60")
    if any(not 1 <= n <= 500 for n in levels_n) or not 0 <= args.soak <= 100_000:
        parser.error("class sizes must be 1..500 and the soak 0..100000 reruns")
    hall = [x for x in args.hall.split(",") if x.strip()]
    if len(hall) != 2 or not all(x.strip().isdigit() and 1 <= int(x) <= 500 for x in hall):
        parser.error("--hall takes two class sizes 1..500, e.g. 5,200")
    return levels_n, think


def classroom_main(args, url: str, pid: int | None, log: Path | None) -> int:
    """``--scenario classroom``: benchmarks/classroom.py's table; 1 on a failure or traceback."""
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    sizes = tuple(int(x) for x in args.hall.split(","))
    rows = asyncio.run(run_classroom(url, pid, only, args.seed, sizes))
    print()
    print_rows(rows)
    found = tracebacks(log)
    print(f"\nTracebacks in the server log: {len(found)} {found[:3]}")
    return 1 if found or any(r.failures for r in rows) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running server (loopback only); default: start one")
    parser.add_argument("--pid", type=int, help="PID of the server given by --url (for memory)")
    parser.add_argument("--students", default="10,30,60", help="comma-separated class sizes")
    parser.add_argument("--cycles", type=int, default=1, help="visits per student (16 reruns)")
    parser.add_argument(
        "--think",
        default="2,6",
        help="think time between clicks, range in s (default 2,6: a student "
        "who reads each step's one-line explanation)",
    )
    parser.add_argument(
        "--fast",
        type=int,
        default=30,
        help="class size of a row with frantic clicking, think 0.5-2 s (0: none)",
    )
    parser.add_argument(
        "--stress", type=int, default=30, help="class size of the no-think-time row (0: none)"
    )
    parser.add_argument("--soak", type=int, default=1000, help="reruns of the soak (0: none)")
    parser.add_argument("--soak-students", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=180.0, help="per level, seconds")
    parser.add_argument(
        "--scenario",
        choices=["levels", "classroom", "class"],
        default="levels",
        help="levels: the classes above and the soak; classroom: benchmarks/classroom.py; "
        "class: a class session (projector and phones, benchmarks/class_load.py)",
    )
    parser.add_argument(
        "--phones", default="30", help="class sizes of the class scenario (comma-separated)"
    )
    parser.add_argument(
        "--replicas",
        type=int,
        default=2,
        help="class scenario: also run it on this many replicas behind nginx with Redis (0: no)",
    )
    parser.add_argument(
        "--only",
        default="open,same_k,new_seed,monte_carlo,hall",
        help="classroom scenarios to run (comma-separated)",
    )
    parser.add_argument("--log", type=Path, help="the log of the server given by --url")
    parser.add_argument(
        "--hall", default="5,200", help="the two lecture-hall sizes compared (classroom)"
    )
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # progress shows when piped to a file
    levels_n, think = checked_args(parser, args)
    if args.scenario == "class":
        from class_load import class_main  # starts and stops its own servers

        return class_main(args)

    proc, log = None, args.log
    if args.url:
        check_loopback(args.url)
        url, pid = args.url.rstrip("/"), args.pid
    else:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = ROOT / "benchmarks" / "out" / "load_test_server.log"
        proc = start_server(port, log)
        pid = proc.pid
    try:
        t0 = time.perf_counter()
        wait_healthy(url, proc)
        print(
            f"server {url} healthy after {time.perf_counter() - t0:.1f} s; "
            f"RSS idle {rss_mb(pid):.0f} MB"
        )
        if args.scenario == "classroom":
            return classroom_main(args, url, pid, log)
        warm = asyncio.run(run_level(url, pid, "warm-up", 1, 1, (0, 0), args.seed, 60))
        print(
            f"warm-up: 1 student, {warm.reruns} reruns, {len(warm.failures)} failed, "
            f"RSS {warm.rss_after:.0f} MB\n"
        )
        levels = []
        for i, n in enumerate(levels_n):
            levels.append(
                asyncio.run(
                    run_level(
                        url, pid, str(n), n, args.cycles, think, args.seed + i + 1, args.time_limit
                    )
                )
            )
        if args.fast:
            levels.append(
                asyncio.run(
                    run_level(
                        url,
                        pid,
                        f"{args.fast} (think 0.5-2 s)",
                        args.fast,
                        args.cycles,
                        (0.5, 2.0),
                        args.seed + 98,
                        args.time_limit,
                    )
                )
            )
        if args.stress:
            levels.append(
                asyncio.run(
                    run_level(
                        url,
                        pid,
                        f"{args.stress} (no think time)",
                        args.stress,
                        args.cycles,
                        (0, 0),
                        args.seed + 99,
                        args.time_limit,
                    )
                )
            )
        print(
            f"Think time between clicks: uniform {think[0]:g}-{think[1]:g} s; "
            f"{RERUNS_PER_CYCLE} reruns per student visit; latency = click sent to "
            "script_finished received.\n"
        )
        print_levels(levels)
        if args.soak:
            soak, samples = asyncio.run(
                run_soak(
                    url,
                    pid,
                    args.soak,
                    args.soak_students,
                    args.seed + 1000,
                    max(args.time_limit, 300),
                )
            )
            print(
                f"\nSoak: {soak.reruns} reruns by {args.soak_students} students at a time, "
                f"a new session per visit, no think time ({soak.wall_s:.0f} s, "
                f"{len(soak.failures)} failed)\n"
            )
            print("| reruns | sessions opened | server RSS (MB) |")
            print("| ---: | ---: | ---: |")
            for reruns, sessions, rss in samples:
                print(f"| {reruns} | {sessions} | {rss:.1f} |")
            later = [s for s in samples[1:] if s[2] == s[2]]  # after the first 100 reruns
            if len(later) >= 3 and len({s[1] for s in later}) >= 2:
                fit = statistics.linear_regression([s[1] for s in later], [s[2] for s in later])
                rss = [s[2] for s in later]
                print(
                    f"\nRSS from {later[0][0]} to {later[-1][0]} reruns: {min(rss):.0f}-"
                    f"{max(rss):.0f} MB; least-squares slope {fit.slope * 1024:+.0f} KB per "
                    f"new session over {later[-1][1] - later[0][1]} sessions."
                )
            print_levels([soak])
        found = tracebacks(log)
        print(f"\nTracebacks in the server log: {len(found)} {found[:3]}")
        failed = sum(len(lv.failures) for lv in levels)
        return 1 if failed or found else 0
    finally:
        if proc is not None:
            stop_server(proc)


if __name__ == "__main__":
    sys.exit(main())
