"""The class scenario of ``benchmarks/load_test.py`` (issue 34, "Measured").

    python benchmarks/load_test.py --scenario class                  # 30 phones, one server
    python benchmarks/load_test.py --scenario class --phones 30,200 --replicas 2

A projector session opens the Class page, presses "Start a class", opens the class's
experiment (the default preset, K and the correct rule) and asks five questions in turn
("Next question": the first five of the class's catalogue); after each it waits until every
phone has sent its answer (or given up), reads its panel once more and presses "Reveal".
Each phone joins by the join link (``?join=CODE``), refreshes its two fragments as the
browser's ``run_every`` timer does (every 2 s: the question, the experiment), answers each
question it sees after thinking 0.5-3 s (a choice or a number in the question's range:
the widget, then Send) and presses "Run 20 rounds" once at a random moment. The projector
refreshes its two panels (the answers, the pool) every 1 s, as its browser would.

Measured:

- **Send -> counted on the projector**: from the phone's Send to the end of the first
  projector refresh that *started* after the phone's Send had come back (so the answer was
  stored before that refresh read the store). An upper bound: the projector may have shown
  it one refresh earlier.
- **panel refresh**: the projector's fragment reruns (answers panel and pool panel).
- **answers sent = answers counted**: per question, the answers whose Send came back with
  "Sent:" against the projector's "Answers in: N of M" read after every phone was done;
  the same for the pooled rounds ("N students pooled R rounds").
- **stale refreshes**: projector refreshes that showed fewer answers than were stored before
  they started (a Redis-backed replica reads a local copy up to 0.5 s old); an answer counts
  as shown once a refresh after its Send reaches its rank, and one never shown is lost.

All over Streamlit's websocket (``streamlit_ws.StreamlitSession(browser_like=True)``),
loopback only, every loop bounded by a deadline.
"""

from __future__ import annotations

import asyncio
import bisect
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs

from streamlit_ws import RunResult, StreamlitSession

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the app's question catalogue (specdec_ui.classroom.asking)

CLASS_PAGE = "Class"
N_QUESTIONS = 5
ROUNDS_PER_PRESS = 20
THINK_S = (0.5, 3.0)
POOL_WINDOW_S = (1.0, 20.0)  # a phone presses "Run 20 rounds" this long after joining
ANSWERS_RE = re.compile(r"Answers in: (\d+) of (\d+) students")
POOL_RE = re.compile(r"\*\*(\d+) students\*\* pooled \*\*([\d,]+) rounds\*\*")
BACKEND_RE = re.compile(r"students joined; ends by [^;]*; (.*?)\.$", re.M)
MAX_STEPS = 10_000  # hard bound on any session's loop


@dataclass(frozen=True)
class Question:
    """One asked question as a phone answers it: its id, widget key and answer range."""

    qid: str
    choices: tuple[str, ...]  # the radio's option labels ("A. ..."); () for a number
    low: float
    high: float

    @property
    def widget(self) -> str:
        kind = "choice" if self.choices else "number"
        return f"class_{kind}_{self.qid.replace('/', '_')}"

    def value(self, rng: random.Random) -> tuple[str, object]:
        """A random answer as the widget sends it: (proto field, value)."""
        if self.choices:  # a radio sends its option's label (Streamlit 1.67)
            return "string_value", rng.choice(self.choices)
        return "double_value", round(rng.uniform(self.low, self.high), 2)


def first_questions(n: int = N_QUESTIONS) -> list[Question]:
    """The questions "Next question" asks from a fresh class, in order."""
    from specdec_ui.classroom.asking import LETTERS, class_questions  # the app's catalogue

    out = []
    for c in class_questions()[:n]:
        low, high = c.span
        labels = tuple(f"{LETTERS[i]}. {t}" for i, t in enumerate(c.question.choices))
        out.append(Question(c.question_id, labels, low, high))
    return out


@dataclass(frozen=True)
class Sent:
    """A phone's answer whose Send came back with "Sent:"."""

    qid: str
    sent_at: float  # Send pressed (perf_counter)
    acked_at: float  # the Send's rerun finished


@dataclass(frozen=True)
class Refresh:
    """One refresh of the projector's answers panel."""

    qid: str
    start: float
    end: float
    count: int


def answer_latencies(
    sent: list[Sent], refreshes: list[Refresh]
) -> tuple[list[float], list[str], int]:
    """(Send -> counted latency of each answer, problems, stale refreshes).

    An answer is shown by the first refresh of its question that started after its Send
    came back and whose count reached the answer's rank among the stored answers (with an
    in-process store that is the first refresh after the Send; a Redis-backed replica reads
    a local copy up to 0.5 s old, so it may take one refresh more). A refresh that shows
    fewer answers than were stored before it started is *stale*; an answer no refresh
    shows is a problem (lost).
    """
    latencies, problems, stale = [], [], 0
    by_q: dict[str, list[Refresh]] = {}
    for r in sorted(refreshes, key=lambda r: r.start):
        by_q.setdefault(r.qid, []).append(r)
    acks = {qid: sorted(s.acked_at for s in sent if s.qid == qid) for qid in by_q}
    for qid, rows in by_q.items():
        stale += sum(r.count < bisect.bisect_left(acks[qid], r.start) for r in rows)
    for s in sent:
        rows = by_q.get(s.qid, [])
        rank = bisect.bisect_right(acks.get(s.qid, []), s.acked_at)
        shown = next((r for r in rows if r.start >= s.acked_at and r.count >= rank), None)
        if shown is None:
            problems.append(f"{s.qid}: an answer never shown on the projector")
        else:
            latencies.append(shown.end - s.sent_at)
    return latencies, problems, stale


@dataclass
class ClassRun:
    """What one class run measured."""

    name: str
    phones: int
    sent: list[Sent] = field(default_factory=list)
    refreshes: list[Refresh] = field(default_factory=list)
    panel_s: list[float] = field(default_factory=list)  # every projector fragment rerun
    phone_s: list[float] = field(default_factory=list)  # every phone rerun
    failures: list[str] = field(default_factory=list)  # failed reruns / refused sends
    counted: dict[str, int] = field(default_factory=dict)  # qid -> projector's final count
    rounds_sent: int = 0
    rounds_counted: int = -1
    pool_students: int = -1
    per_replica: Counter = field(default_factory=Counter)
    rss_before: list[float] = field(default_factory=list)
    rss_after: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    tracebacks: list[str] = field(default_factory=list)
    backend: str = ""  # the store the projector's caption names


@dataclass
class Shared:
    """What the projector and the phones see of each other (the benchmark's bookkeeping)."""

    questions: list[Question]
    code: str = ""
    code_ready: asyncio.Event = field(default_factory=asyncio.Event)
    done_q: Counter = field(default_factory=Counter)  # qid -> phones done with it
    pooled: int = 0  # phones done pooling (pressed, or gave up)
    joined: int = 0
    finished: bool = False


def _record(run: ClassRun, into: list[float], r: RunResult, who: str, expect: str = "") -> bool:
    ok = r.ok and (not expect or expect in r.text())
    if ok:
        into.append(r.latency_s)
    else:
        why = r.status if not r.ok else f"expected {expect!r}"
        run.failures.append(f"{who}: {why}")
    return ok


# ---------------------------------------------------------------------------- the projector


async def _projector_refresh(s: StreamlitSession, run: ClassRun, qid: str | None) -> int | None:
    """Rerun the projector's fragments once; the answers count it shows (None: none)."""
    count = None
    for fid in list(s.fragments):
        start = time.perf_counter()
        r = await s.rerun_fragment(fid)
        if not _record(run, run.panel_s, r, "projector panel"):
            continue
        text = r.text()
        if m := ANSWERS_RE.search(text):
            count = int(m.group(1))
            if qid is not None:
                run.refreshes.append(Refresh(qid, start, time.perf_counter(), count))
        if m := POOL_RE.search(text):
            run.pool_students, run.rounds_counted = (
                int(m.group(1)),
                int(m.group(2).replace(",", "")),
            )
    return count


async def _refresh_until(s, run, qid, ready, deadline: float) -> None:
    """Refresh every interval (1 s) until ``ready()`` or the deadline."""
    interval = min(s.fragments.values(), default=1.0) or 1.0
    for _ in range(MAX_STEPS):
        if ready() or time.monotonic() > deadline:
            return
        t0 = time.perf_counter()
        await _projector_refresh(s, run, qid)
        await asyncio.sleep(max(0.0, interval - (time.perf_counter() - t0)))


async def projector(url: str, cookie: str | None, run: ClassRun, sh: Shared, deadline: float):
    s = StreamlitSession(url, timeout_s=60, cookie=cookie, browser_like=True)
    await s.connect()
    try:
        r = await s.open_page(CLASS_PAGE)
        if not _record(run, run.panel_s, r, "projector open", "Start a class"):
            return
        r = await s.click("class_start")
        sh.code = parse_qs(s.query_string).get("class", [""])[0]
        if m := BACKEND_RE.search(r.text()):
            run.backend = m.group(1)
        if not _record(run, run.panel_s, r, "projector start", "Join code") or not sh.code:
            return
        r = await s.click("class_exp_open")
        _record(run, run.panel_s, r, "projector open experiment")
        sh.code_ready.set()
        await _refresh_until(s, run, None, lambda: sh.joined >= run.phones, deadline)
        for q in sh.questions:
            r = await s.click("class_next")
            if not _record(run, run.panel_s, r, "projector ask", "Answers in"):
                return
            await _refresh_until(
                s, run, q.qid, lambda q=q: sh.done_q[q.qid] >= run.phones, deadline
            )
            await asyncio.sleep(0.6)  # a Redis-backed replica's local copy: at most 0.5 s old
            run.counted[q.qid] = await _projector_refresh(s, run, q.qid) or 0
            r = await s.click("class_reveal")
            _record(run, run.panel_s, r, "projector reveal", "Right answer")
        await _refresh_until(s, run, None, lambda: sh.pooled >= run.phones, deadline)
        await asyncio.sleep(0.6)  # a Redis-backed replica's local copy is at most 0.5 s old
        await _projector_refresh(s, run, None)
        sh.finished = True
        r = await s.click("class_end")
        _record(run, run.panel_s, r, "projector end", "has ended")
    finally:
        sh.finished = True
        sh.code_ready.set()
        await s.close()


# ---------------------------------------------------------------------------- a phone


class Phone:
    def __init__(self, url: str, cookie: str | None, run: ClassRun, sh: Shared, seed: int):
        self.run, self.sh, self.rng = run, sh, random.Random(seed)
        self.s = StreamlitSession(url, timeout_s=60, cookie=cookie, browser_like=True)
        self.done: set[str] = set()  # questions answered or given up
        self.pool_at = 0.0
        self.pooled = False

    def _give_up(self, qid: str) -> None:
        if qid not in self.done:
            self.done.add(qid)
            self.sh.done_q[qid] += 1

    def _finish_pool(self) -> None:
        if not self.pooled:
            self.pooled = True
            self.sh.pooled += 1

    async def _answer(self, q: Question) -> None:
        await asyncio.sleep(self.rng.uniform(*THINK_S))
        proto_field, value = q.value(self.rng)
        r = await self.s.set_value(q.widget, proto_field, value)
        if _record(self.run, self.run.phone_s, r, "phone answer widget"):
            sent_at = time.perf_counter()
            r = await self.s.click("class_send")
            if _record(self.run, self.run.phone_s, r, "phone send", "Sent:"):
                self.run.sent.append(Sent(q.qid, sent_at, time.perf_counter()))
        self._give_up(q.qid)

    async def _pool(self) -> None:
        r = await self.s.click("class_run")
        if _record(self.run, self.run.phone_s, r, "phone run rounds", "Added 20 rounds"):
            self.run.rounds_sent += ROUNDS_PER_PRESS
        self._finish_pool()

    async def _tick(self) -> None:
        """One timer tick: rerun the phone's fragments, then act on what they show."""
        for fid in list(self.s.fragments):
            r = await self.s.rerun_fragment(fid)
            _record(self.run, self.run.phone_s, r, "phone refresh")
        for q in self.sh.questions:
            if q.qid not in self.done and q.widget in self.s.widget_ids:
                await self._answer(q)
        if not self.pooled and time.monotonic() >= self.pool_at:
            if "class_run" in self.s.widget_ids:
                await self._pool()

    async def live(self, deadline: float) -> None:
        await self.sh.code_ready.wait()
        try:
            await self.s.connect()
            r = await self.s.open_page(CLASS_PAGE, f"join={self.sh.code}")
            joined = _record(self.run, self.run.phone_s, r, "phone join", "students joined")
        except (OSError, TimeoutError) as err:
            self.run.failures.append(f"phone connect: {err}")
            joined = False
        self.sh.joined += 1
        self.pool_at = time.monotonic() + self.rng.uniform(*POOL_WINDOW_S)
        interval = min(self.s.fragments.values(), default=2.0) or 2.0
        await asyncio.sleep(self.rng.uniform(0, interval))  # the timers' phases differ
        for _ in range(MAX_STEPS if joined else 0):
            if self.sh.finished or time.monotonic() > deadline:
                break
            t0 = time.perf_counter()
            await self._tick()
            await asyncio.sleep(max(0.0, interval - (time.perf_counter() - t0)))
        for q in self.sh.questions:
            self._give_up(q.qid)
        self._finish_pool()
        await self.s.close()


# ---------------------------------------------------------------------------- the class


async def run_class(run: ClassRun, url: str, cookie_for, seed: int, time_limit: float) -> None:
    """A projector and ``run.phones`` phones; ``cookie_for()`` gives (cookie, replica) of a
    new browser (a load balancer's affinity cookie; (None, "") for one server)."""
    sh = Shared(first_questions())
    deadline = time.monotonic() + time_limit
    rng = random.Random(seed)
    cookie, _ = await cookie_for()
    phones = []
    for _ in range(run.phones):
        phone_cookie, replica = await cookie_for()
        run.per_replica[replica] += 1
        phones.append(Phone(url, phone_cookie, run, sh, rng.getrandbits(64)))
    start = time.perf_counter()
    await asyncio.gather(
        projector(url, cookie, run, sh, deadline), *(p.live(deadline) for p in phones)
    )
    run.wall_s = time.perf_counter() - start


def summary(run: ClassRun) -> dict[str, object]:
    """The table's numbers (seconds, counts) and the bookkeeping's problems."""
    from load_test import pct  # the same percentile as the other scenarios

    lat, problems, stale = answer_latencies(run.sent, run.refreshes)
    sent = Counter(s.qid for s in run.sent)
    for qid, n in sent.items():
        if run.counted.get(qid) != n:
            problems.append(f"{qid}: {n} answers sent, {run.counted.get(qid)} counted")
    if run.rounds_counted != run.rounds_sent:
        problems.append(f"{run.rounds_sent} rounds sent, {run.rounds_counted} pooled")
    return {
        "lat": (pct(lat, 0.5), pct(lat, 0.95), max(lat, default=float("nan"))),
        "panel": (pct(run.panel_s, 0.5), pct(run.panel_s, 0.95), max(run.panel_s, default=0)),
        "sent": sum(sent.values()),
        "counted": sum(run.counted.values()),
        "problems": problems,
        "stale": stale,
    }


def print_runs(runs: list[ClassRun]) -> None:
    print(
        "| set-up | phones | answers sent / counted | Send -> on projector p50 / p95 / max (s) "
        "| panel refresh p50 / p95 / max (s) | rounds sent / pooled | phone reruns "
        "| failed reruns | stale refreshes | server RSS before -> after (MB) | wall (s) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for run in runs:
        s = summary(run)
        lat, panel = s["lat"], s["panel"]
        rss = " + ".join(
            f"{a:.0f} -> {b:.0f}" for a, b in zip(run.rss_before, run.rss_after, strict=True)
        )
        print(
            f"| {run.name} | {run.phones} | {s['sent']} / {s['counted']} | "
            f"{lat[0]:.2f} / {lat[1]:.2f} / {lat[2]:.2f} | "
            f"{panel[0]:.2f} / {panel[1]:.2f} / {panel[2]:.2f} | "
            f"{run.rounds_sent} / {run.rounds_counted} | {len(run.phone_s)} | "
            f"{len(run.failures)} | {s['stale']} | {rss} | {run.wall_s:.0f} |"
        )
    for run in runs:
        s = summary(run)
        print(f"  {run.name}: store: {run.backend or '?'}")
        if any(run.per_replica):
            print(f"  {run.name}: phones per replica {dict(sorted(run.per_replica.items()))}")
        for what, items in (("failed", run.failures), ("problems", s["problems"])):
            if items:
                print(f"  {run.name}: {len(items)} {what}, e.g. {sorted(set(items))[:4]}")
        if run.tracebacks:
            print(f"  {run.name}: tracebacks in the server log: {run.tracebacks[:3]}")


def failed(run: ClassRun) -> bool:
    return bool(run.failures or summary(run)["problems"] or run.tracebacks)


# ---------------------------------------------------------------------------- servers


async def _warm(url: str) -> None:
    """One visit of the Class page (the server imports what the page needs)."""
    s = StreamlitSession(url, timeout_s=120, browser_like=True)
    await s.connect()
    try:
        await s.open_page(CLASS_PAGE)
    finally:
        await s.close()


async def _no_cookie() -> tuple[None, str]:
    return None, ""


def _nginx_cookie(url: str):
    from replicas import HEADER, cookie_from, http_get

    async def cookie_for() -> tuple[str, str]:
        _, headers = await asyncio.get_running_loop().run_in_executor(None, http_get, url + "/")
        return cookie_from(headers), headers.get(HEADER, "?")

    return cookie_for


def one_server(n: int, seed: int, time_limit: float) -> ClassRun:
    from load_test import ROOT, rss_mb, tracebacks
    from local_server import free_port, start_server, stop_server, wait_healthy

    run = ClassRun("one server, in-process store", n)
    port, log = free_port(), ROOT / "benchmarks" / "out" / "class_server.log"
    url = f"http://127.0.0.1:{port}"
    proc = start_server(port, log)
    try:
        wait_healthy(url, proc, log_path=log, timeout_s=120)
        asyncio.run(_warm(url))
        run.rss_before = [rss_mb(proc.pid)]
        asyncio.run(run_class(run, url, _no_cookie, seed, time_limit))
        time.sleep(1.0)
        run.rss_after = [rss_mb(proc.pid)]
        run.tracebacks = tracebacks(log)
    finally:
        stop_server(proc)
    return run


def two_replicas(n: int, seed: int, time_limit: float, replicas: int = 2) -> ClassRun:
    import os

    from load_test import rss_mb, tracebacks
    from redis_server import run_redis
    from replicas import run_cluster

    run = ClassRun(f"{replicas} replicas + nginx + Redis", n)
    old = os.environ.get("SPECDEC_STORE")
    try:
        with run_redis() as redis:
            os.environ["SPECDEC_STORE"] = redis.url  # the replicas inherit it
            with run_cluster(replicas) as cluster:
                servers = cluster.procs[:replicas]
                for replica_url in cluster.replica_urls:
                    asyncio.run(_warm(replica_url))
                run.rss_before = [rss_mb(p.pid) for p in servers]
                asyncio.run(
                    run_class(run, cluster.url, _nginx_cookie(cluster.url), seed, time_limit)
                )
                time.sleep(1.0)
                run.rss_after = [rss_mb(p.pid) for p in servers]
                for i in range(replicas):
                    run.tracebacks += tracebacks(cluster.workdir / f"replica{i}.log")
    finally:
        if old is None:
            os.environ.pop("SPECDEC_STORE", None)
        else:
            os.environ["SPECDEC_STORE"] = old
    return run


def class_main(args) -> int:
    """``--scenario class``: each class size on one server, then on replicas with Redis."""
    sizes = [int(x) for x in args.phones.split(",") if x.strip()]
    if any(not 1 <= n <= 400 for n in sizes) or not 0 <= args.replicas <= 4:
        raise SystemExit("--phones takes class sizes 1..400, --replicas 0..4")
    runs = []
    for i, n in enumerate(sizes):
        runs.append(one_server(n, args.seed + i, args.time_limit))
        print_runs(runs[-1:])
        if args.replicas >= 2:
            runs.append(two_replicas(n, args.seed + i, args.time_limit, args.replicas))
            print_runs(runs[-1:])
    print(
        f"\nA projector and N phones; {N_QUESTIONS} questions asked in turn, each phone "
        f"answers each (thinks {THINK_S[0]:g}-{THINK_S[1]:g} s after seeing it) and presses "
        f"'Run {ROUNDS_PER_PRESS} rounds' once; the phones' fragments rerun every 2 s, the "
        "projector's every 1 s. Send -> on projector: to the end of the first projector "
        "refresh that started after the Send came back.\n"
    )
    print_runs(runs)
    return 1 if any(failed(r) for r in runs) else 0
