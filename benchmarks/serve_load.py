"""Load on `quaderno serve`: what the HTTP layer adds over calling `aask` in Python.

Run:  .venv/bin/python benchmarks/serve_load.py [--latency 0.05] [--requests 256]
                                                [--out benchmarks/results_serve_load.txt]

The LLM is a FakeLLM answering after a fixed --latency (no model runs). The same method
(vanilla-llm: one LLM call) answers the same question two ways at 1, 16 and 64 concurrent
clients:
  direct  `await aask(...)` in this process, c coroutines at a time;
  HTTP    POST /v1/ask to a uvicorn server in a child process (the app of `quaderno serve`
          with the same FakeLLM), c keep-alive connections at a time over loopback, from
          wrk (Debian's package: a C load generator, so the client costs little CPU) or,
          without wrk or with --client httpx, from httpx in this process (which itself
          becomes the bottleneck at 64 connections).
Reported per concurrency: requests/s and p50/p99 latency of both, and the added latency
(HTTP minus direct, per percentile); any error (non-2xx, socket error) fails the run.
Target: <= 5 ms added at p50. The server's in-flight limits are raised to the load (they
would 429 it).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

from quaderno.ask import aask
from quaderno.llm.fake import FakeLLM
from quaderno.llm.lm import LM
from quaderno.workspace import Workspace

log = logging.getLogger("serve_load")

METHOD = "vanilla-llm"
REPLY = "<answer>Paris</answer>"
CONCURRENCY = (1, 16, 64)


def fake_lm(latency: float) -> LM:
    """The same LM both ways: no cache, no call log (the server's layer is what is timed)."""
    return LM(FakeLLM(respond=lambda request: REPLY, latency_s=latency), cache=None, log=None)


def serve(port: int, home: Path, latency: float) -> None:
    """The child process: `quaderno serve`'s app with the fake LLM."""
    import uvicorn

    from quaderno.serve.app import create_app
    from quaderno.serve.settings import ServeSettings

    settings = ServeSettings(home=home, port=port, max_inflight=1024,
                             max_inflight_per_client=1024)
    app = create_app(settings, lm=fake_lm(latency))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


async def run_load(call, n: int, concurrency: int) -> tuple[list[float], float, int]:  # noqa: ANN001
    """(latencies in ms, wall seconds, errors) of ``n`` calls, ``concurrency`` at a time."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(i)
    latencies: list[float] = []
    errors = 0

    async def worker() -> None:
        nonlocal errors
        while not queue.empty():
            i = queue.get_nowait()
            t0 = time.perf_counter()
            ok = await call(i)
            latencies.append((time.perf_counter() - t0) * 1000)
            errors += not ok

    t0 = time.perf_counter()
    await asyncio.gather(*[worker() for _ in range(concurrency)])
    return latencies, time.perf_counter() - t0, errors


async def direct(home: Path, latency: float, n: int, concurrency: int):  # noqa: ANN201
    lm, ws = fake_lm(latency), Workspace(home)

    async def one(i: int) -> bool:
        answer = await aask(f"Question {i}?", method=METHOD, lm=lm, workspace=ws)
        return answer.answer == "Paris"

    await run_load(one, 2 * concurrency, concurrency)  # warm up
    return await run_load(one, n, concurrency)


async def over_http(url: str, n: int, concurrency: int):  # noqa: ANN201
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        async def one(i: int) -> bool:
            res = await client.post("/v1/ask", json={"question": f"Question {i}?",
                                                     "method": METHOD})
            return res.status_code == 200 and res.json()["answer"] == "Paris"

        await run_load(one, 2 * concurrency, concurrency)  # warm up (and open connections)
        return await run_load(one, n, concurrency)


WRK_BODY = f"""wrk.method = "POST"
wrk.body = '{{"question": "Question?", "method": "{METHOD}"}}'
wrk.headers["Content-Type"] = "application/json"
"""


def wrk_ms(text: str, label: str) -> float:
    """A latency percentile from wrk's --latency table ('50%   51.72ms') in ms."""
    m = re.search(rf"^\s*{re.escape(label)}\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    if m is None:
        raise SystemExit(f"no {label} in wrk's output:\n{text}")
    return float(m[1]) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m[2]]


def over_wrk(url: str, seconds: float, concurrency: int) -> tuple[float, float, float, int]:
    """(requests/s, p50 ms, p99 ms, errors) of wrk posting to /v1/ask for ``seconds``."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as fh:
        fh.write(WRK_BODY)
    base = ["wrk", "-t1", f"-c{concurrency}", "--latency", "-s", fh.name, f"{url}/v1/ask"]
    subprocess.run([*base[:3], "-d2s", *base[3:]], check=True, capture_output=True)  # warm
    out = subprocess.run([*base[:3], f"-d{seconds:g}s", *base[3:]], check=True,
                         capture_output=True, text=True).stdout
    os.unlink(fh.name)
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rate, wrk_ms(out, "50%"), wrk_ms(out, "99%"), errors + (int(non2xx[1]) if non2xx
                                                                  else 0)


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (Linux), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(url: str, proc: subprocess.Popen) -> None:
    for _ in range(600):
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/v1/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise SystemExit("the server did not start")


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def pcts(values: list[float]) -> tuple[float, float]:
    return float(np.percentile(values, 50)), float(np.percentile(values, 99))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="FakeLLM seconds per call")
    parser.add_argument("--requests", type=int, default=256, help="requests per concurrency")
    parser.add_argument("--seconds", type=float, default=5.0, help="wrk: seconds per row")
    parser.add_argument("--client", choices=("auto", "wrk", "httpx"), default="auto",
                        help="HTTP load generator [default: wrk when installed]")
    parser.add_argument("--out", type=Path, default=None, help="also write the table here")
    parser.add_argument("--append", action="store_true", help="append to --out")
    parser.add_argument("--serve", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve, args.home, args.latency)
        return
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    use_wrk = args.client == "wrk" or (args.client == "auto" and shutil.which("wrk"))
    if args.client == "wrk" and not shutil.which("wrk"):
        raise SystemExit("--client wrk: wrk is not installed (apt-get install wrk)")
    home = Path(tempfile.mkdtemp(prefix="serve-load-")) / "home"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--home",
                             str(home), "--latency", str(args.latency)])
    client = (f"wrk -t1 (C), {args.seconds:g} s per row after 2 s of warm-up" if use_wrk
              else f"httpx in the benchmark's process, {args.requests} requests per row")
    loop = "uvloop" if _has("uvloop") else "asyncio"
    http = "httptools" if _has("httptools") else "h11"
    lines = ["# quaderno serve: load over HTTP vs `aask` in Python",
             f"FakeLLM latency {args.latency * 1000:.0f} ms per call, method {METHOD} (one "
             f"LLM call); direct: {args.requests} calls per row after a warm-up; HTTP: "
             f"{client}; keep-alive over loopback; server: uvicorn ({loop}, {http}), one "
             "worker process, the FakeLLM in it",
             f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}, load average before the run "
             f"{os.getloadavg()[0]:.1f} (other work shares the cores)",
             f"command: .venv/bin/python benchmarks/serve_load.py --latency {args.latency} "
             f"--requests {args.requests} --seconds {args.seconds:g} --client "
             f"{'wrk' if use_wrk else 'httpx'}", "",
             "| clients | direct req/s | HTTP req/s | direct p50 | HTTP p50 | added p50 | "
             "direct p99 | HTTP p99 | added p99 | server CPU/req | errors |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    worst = 0.0
    try:
        wait_up(url, proc)
        for c in CONCURRENCY:
            d_lat, d_wall, d_err = asyncio.run(direct(home, args.latency, args.requests, c))
            (d50, d99), d_rate = pcts(d_lat), args.requests / d_wall
            if use_wrk:
                cpu0, t0 = cpu_seconds(proc.pid), time.perf_counter()
                h_rate, h50, h99, h_err = over_wrk(url, args.seconds, c)
                cpu1, served = cpu_seconds(proc.pid), h_rate * (time.perf_counter() - t0)
            else:
                cpu0 = cpu_seconds(proc.pid)
                h_lat, h_wall, h_err = asyncio.run(over_http(url, args.requests, c))
                (h50, h99), h_rate = pcts(h_lat), args.requests / h_wall
                cpu1, served = cpu_seconds(proc.pid), args.requests * 1.0
            # the warm-up is in the CPU time too: an upper bound per request
            cpu = (f"{(cpu1 - cpu0) / served * 1000:.2f} ms" if cpu0 is not None
                   and cpu1 is not None else "n/a")
            errors = d_err + h_err
            worst = max(worst, h50 - d50)
            lines.append(f"| {c} | {d_rate:.1f} | {h_rate:.1f} "
                         f"| {d50:.2f} ms | {h50:.2f} ms | {h50 - d50:+.2f} ms | {d99:.2f} ms | "
                         f"{h99:.2f} ms | {h99 - d99:+.2f} ms | {cpu} | {errors} |")
            log.info(lines[-1])
            if errors:
                raise SystemExit(f"{errors} errors at {c} clients: the run is void")
    finally:
        proc.terminate()
        proc.wait(10)
    verdict = "met" if worst <= 5.0 else "NOT met"
    lines += ["", f"largest added p50: {worst:.2f} ms (target <= 5 ms: {verdict}); a direct "
              "call's latency is the FakeLLM's plus `aask`'s own work; server CPU/req is the "
              "server process's CPU time over the requests it answered (warm-up included): "
              "HTTP req/s x CPU/req is how busy its one event loop was"]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out is not None:
        with open(args.out, "a" if args.append else "w", encoding="utf-8") as fh:
            fh.write(("\n" if args.append else "") + text)


if __name__ == "__main__":
    main()
