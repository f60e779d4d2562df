"""Scale out on loopback: Streamlit replicas behind nginx with sticky sessions, tested.

    python benchmarks/replicas.py                       # 2 replicas, 20 students; ~30 s
    python benchmarks/replicas.py --replicas 3 --students 60

Starts N ``streamlit run app.py`` replicas on free loopback ports and nginx (the Debian
package, ``/usr/sbin/nginx``, or ``SPECDEC_NGINX``) in front, with:

- **session affinity by a cookie**: nginx's open-source ``hash ... consistent`` on the
  cookie ``specdec_replica``; a first request without the cookie hashes on a random
  ``$request_id``, and nginx sets the cookie to that value, so every later request of the
  same browser (the page, its scripts, the websocket, a reconnect) goes to the same
  replica. (``ip_hash`` would send a whole classroom behind one NAT address, and every
  test client on loopback, to one replica);
- **websocket upgrade** forwarded (HTTP/1.1, ``Upgrade`` / ``Connection``, the client's
  ``Host`` with its port, so that Streamlit's origin check passes);
- a response header ``X-Specdec-Replica`` naming the replica that answered, for the test.

Then each simulated student loads the page over HTTP (gets the cookie), opens the
websocket with the cookie, clicks through the Round page, disconnects, reconnects and
clicks on. Printed: students per replica, failed reruns, and sessions that moved replica
(goal: 0 and 0). ``tests/scale/test_replicas.py`` runs the same check. Loopback only; the
script stops exactly the processes it started (by their PIDs).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_server import free_port, start_server, stop_server, wait_healthy  # noqa: E402
from streamlit_ws import StreamlitSession  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NGINX = Path(os.environ.get("SPECDEC_NGINX", "/usr/sbin/nginx"))
COOKIE = "specdec_replica"
HEADER = "x-specdec-replica"
ROUND_PAGE, ROUND_QUERY = "Step_through_a_round", "mode=preset&preset=000-round"

NGINX_CONF = """
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;

    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      close;
    }}
    # Session affinity: the cookie's value, or a fresh random id that becomes the cookie.
    map $cookie_{cookie} $specdec_affinity {{
        ""      $request_id;
        default $cookie_{cookie};
    }}
    upstream specdec {{
        hash $specdec_affinity consistent;
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://specdec;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_read_timeout 86400s;
            proxy_buffering off;
            add_header Set-Cookie "{cookie}=$specdec_affinity; Path=/; HttpOnly; SameSite=Lax"
                       always;
            add_header X-Specdec-Replica $upstream_addr always;
        }}
    }}
}}
"""


def nginx_config(port: int, replica_ports: list[int], workdir: Path) -> str:
    """The nginx configuration of the loopback set-up (see the module docstring)."""
    servers = "\n".join(f"        server 127.0.0.1:{p};" for p in replica_ports)
    return NGINX_CONF.format(dir=workdir, cookie=COOKIE, servers=servers, port=port)


@dataclass
class Cluster:
    url: str  # nginx
    replica_urls: list[str]
    workdir: Path
    procs: list[subprocess.Popen] = field(default_factory=list)


@contextlib.contextmanager
def run_cluster(n_replicas: int = 2, *, nginx: Path = NGINX):
    """Start ``n_replicas`` Streamlit servers and nginx; yield a :class:`Cluster`; stop all."""
    workdir = Path(tempfile.mkdtemp(prefix="specdec-nginx-"))
    cluster = Cluster("", [], workdir)
    try:
        ports = [free_port() for _ in range(n_replicas)]
        for i, port in enumerate(ports):
            cluster.procs.append(start_server(port, workdir / f"replica{i}.log"))
            cluster.replica_urls.append(f"http://127.0.0.1:{port}")
        for url, proc in zip(cluster.replica_urls, cluster.procs, strict=True):
            wait_healthy(url, proc, timeout_s=120)
        port = free_port()
        conf = workdir / "nginx.conf"
        conf.write_text(nginx_config(port, ports, workdir))
        cmd = [str(nginx), "-p", str(workdir), "-c", str(conf), "-g", "daemon off;"]
        log = open(workdir / "nginx.out", "wb")  # noqa: SIM115 - closed with the process
        cluster.procs.append(
            subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        )
        cluster.url = f"http://127.0.0.1:{port}"
        wait_healthy(cluster.url, cluster.procs[-1], log_path=workdir / "nginx.out", timeout_s=30)
        yield cluster
    finally:
        for proc in reversed(cluster.procs):
            if proc.args and str(proc.args[0]) == str(nginx):
                _stop_nginx(proc)
            else:
                stop_server(proc)
        shutil.rmtree(workdir, ignore_errors=True)


def _stop_nginx(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGQUIT)  # graceful: the master stops its workers
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def http_get(url: str, cookie: str | None = None) -> tuple[int, dict[str, str]]:
    """GET ``url`` (loopback); (status, lower-cased headers)."""
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    with urllib.request.urlopen(request, timeout=30) as resp:
        resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}


def cookie_from(headers: dict[str, str]) -> str:
    raw = headers.get("set-cookie", "")
    first = raw.split(";", 1)[0]
    if not first.startswith(f"{COOKIE}="):
        raise RuntimeError(f"nginx set no {COOKIE} cookie (got {raw!r})")
    return first


@dataclass
class Outcome:
    per_replica: collections.Counter = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    reruns: int = 0


async def student(url: str, outcome: Outcome, i: int, clicks: int) -> None:
    """Page over HTTP (cookie), websocket, clicks, reconnect, clicks; record the replica."""
    loop = asyncio.get_running_loop()
    try:
        _, headers = await loop.run_in_executor(None, http_get, url + "/")
        cookie = cookie_from(headers)
        replica = headers.get(HEADER, "?")
    except (OSError, RuntimeError) as err:
        outcome.failures.append(f"student {i}: page: {err}")
        return
    outcome.per_replica[replica] += 1
    for visit in range(2):  # the second visit is a reconnect with the same cookie
        session = StreamlitSession(url, timeout_s=60, cookie=cookie)
        try:
            await session.connect()
        except (OSError, TimeoutError) as err:
            outcome.failures.append(f"student {i}: connect: {err}")
            return
        try:
            seen = session.response_headers.get(HEADER, "?")
            if seen != replica:
                outcome.moved.append(f"student {i} visit {visit}: {replica} -> {seen}")
            result = await session.open_page(ROUND_PAGE, ROUND_QUERY)
            outcome.reruns += 1
            if not result.ok or "Step 1 of" not in result.text():
                outcome.failures.append(f"student {i}: open: {result.status}")
                return
            for step in range(2, 2 + clicks):
                result = await session.click("round_next")
                outcome.reruns += 1
                if not result.ok or f"Step {step} of" not in result.text():
                    outcome.failures.append(f"student {i}: click: {result.status}")
                    return
        finally:
            await session.close()
        _, again = await loop.run_in_executor(None, http_get, url + "/_stcore/health", cookie)
        if again.get(HEADER, "?") != replica:
            outcome.moved.append(f"student {i}: health check went to {again.get(HEADER)}")


async def run_students(url: str, n: int, clicks: int = 3) -> Outcome:
    outcome = Outcome()
    await asyncio.gather(*(student(url, outcome, i, clicks) for i in range(n)))
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--students", type=int, default=20)
    args = parser.parse_args(argv)
    if not (1 <= args.replicas <= 8 and 1 <= args.students <= 500):
        parser.error("--replicas 1..8, --students 1..500")
    if not NGINX.exists():
        print(f"{NGINX} not found: apt-get install -y nginx (or set SPECDEC_NGINX)")
        return 2
    start = time.perf_counter()
    with run_cluster(args.replicas) as cluster:
        print(f"nginx {cluster.url} -> {', '.join(cluster.replica_urls)}")
        outcome = asyncio.run(run_students(cluster.url, args.students))
    print("\n| replica | students |\n| --- | ---: |")
    for replica, n in sorted(outcome.per_replica.items()):
        print(f"| {replica} | {n} |")
    print(
        f"\n{args.students} students, {outcome.reruns} reruns, {len(outcome.failures)} failed, "
        f"{len(outcome.moved)} moved replica; {time.perf_counter() - start:.0f} s in all"
    )
    for line in (outcome.failures + outcome.moved)[:5]:
        print("  " + line)
    return 1 if outcome.failures or outcome.moved else 0


if __name__ == "__main__":
    sys.exit(main())
