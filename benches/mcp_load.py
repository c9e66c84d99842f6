"""Many MCP clients on one checkout (issue 73): N servers (`coret-tui --mcp REPO`, one per
client, as agents start them) over one cache, each client making L `locate` calls while the tree
is edited between rounds; optionally a headless `--query` and an `--eval` on the same cache
meanwhile. Through the official Python MCP client (`pip install mcp`).

Usage: python3 benches/mcp_load.py BINARY REPO [--clients 8] [--locates 100] [--rounds 10]
                                   [--retriever bm25|hybrid] [--kill-owner] [--eval INSTANCES [--eval-repos DIR]] [--distinct]

The checkout's owner is a server of its own that no client talks to (started first, stdin held
open), so that `--kill-owner` breaks no client's session; the N clients' servers attach to it.
REPO is edited (a scratch copy: the script adds a file per round and removes them at the end).
Each round: every client makes L / rounds locates at once with the others; then a new file with
a new function is written; the first locate of each client after it must find the function
(`sees_every_edit`). The clients ask five issues in turn, so repeated texts are answered from
the query-vector cache; `--distinct` makes every call's text its own. `--kill-owner` SIGKILLs the owning server (`owner.lock`) halfway; the
clients' servers then carry on (one takes the checkout over). Prints one JSON object: latency
p50/p99 per client and over all, errors, whether every client saw every edit, and the wall time.
The cache directory is CORET_CACHE_DIR when set (a fresh one otherwise).
"""

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ISSUES = [
    "The session does not keep cookies between redirects",
    "Timeout is ignored when a proxy is configured",
    "Unicode characters in the URL are encoded twice",
    "Headers given as bytes are rejected with a confusing error",
    "Retries do not back off after a connection error",
]


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


async def client(i, session, issues, results, errors, distinct):
    for issue in issues:
        if distinct:
            issue = f"{issue} (client {i}, call {len(results[i])})"
        t = time.perf_counter()
        try:
            r = await session.call_tool("locate", {"issue": issue, "top_k": 10})
            if r.isError:
                errors.append((i, issue, "error answer"))
        except Exception as e:  # noqa: BLE001 - a failed call is counted, not fatal
            errors.append((i, issue, repr(e)))
        results[i].append((time.perf_counter() - t) * 1000)


async def sees(session, name):
    r = await session.call_tool("locate", {"issue": f"{name} of an order", "top_k": 3})
    if r.isError or not r.structuredContent:
        return False
    chunks = [c for f in r.structuredContent["files"] for c in f["chunks"]]
    return any(c["name"] == name for c in chunks)


def owner_pid(cache):
    for lock in Path(cache).rglob("owner.lock"):
        text = lock.read_text().strip()
        if text:
            return int(text)
    return None


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("repo", type=Path)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--locates", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--retriever", default="bm25")
    ap.add_argument("--kill-owner", action="store_true")
    ap.add_argument("--eval", type=Path, help="an instances file run with --eval on the same cache meanwhile")
    ap.add_argument("--eval-repos", type=Path, help="the mirrors --eval reads (default: REPO's folder)")
    ap.add_argument("--distinct", action="store_true", help="every call's issue text its own")
    a = ap.parse_args()
    cache = os.environ.get("CORET_CACHE_DIR") or tempfile.mkdtemp(prefix="coret-load-")
    env = {**os.environ, "CORET_CACHE_DIR": cache}
    params = StdioServerParameters(
        command=a.binary, args=["--mcp", str(a.repo), "--retriever", a.retriever], env=env
    )
    results = {i: [] for i in range(a.clients)}
    errors, missed, added = [], [], []
    side = []
    start = time.perf_counter()
    devnull = open(os.devnull, "w")
    owner = subprocess.Popen([a.binary, *params.args], env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Its socket appears once its index is open; a build without owners writes no lock at all.
    started = time.time()
    while not list(Path(cache).rglob("owner.sock")) and owner.poll() is None and time.time() < started + 600:
        if time.time() > started + 5 and not list(Path(cache).rglob("owner.lock")):
            break
        time.sleep(0.05)
    async with AsyncExitStack() as stack:
        sessions = []
        for i in range(a.clients):
            read, write = await stack.enter_async_context(stdio_client(params, errlog=devnull))
            s = await stack.enter_async_context(ClientSession(read, write))
            await s.initialize()
            await s.call_tool("locate", {"issue": ISSUES[0], "top_k": 1})
            sessions.append(s)
        if a.eval:
            side.append(subprocess.Popen(
                [a.binary, "--eval", str(a.eval), "--repos", str(a.eval_repos or a.repo.parent), "--retriever", "bm25",
                 "--out", tempfile.mkdtemp(prefix="coret-load-eval-")],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        per_round = max(1, a.locates // a.rounds)
        alive = list(range(a.clients))
        for rnd in range(a.rounds):
            issues = [ISSUES[(rnd + k) % len(ISSUES)] for k in range(per_round)]
            await asyncio.gather(*(client(i, sessions[i], issues, results, errors, a.distinct) for i in alive))
            name = f"refund_order_{rnd}"
            path = a.repo / f"coret_load_{rnd}.py"
            path.write_text(f"def {name}(order):\n    return order.total\n")
            added.append(path)
            if a.kill_owner and rnd == a.rounds // 2:
                os.kill(owner.pid, signal.SIGKILL)
                owner.wait()
            seen = await asyncio.gather(*(sees(sessions[i], name) for i in alive))
            missed += [(i, name) for i, ok in zip(alive, seen) if not ok]
        wall = time.perf_counter() - start
        for p in side:
            p.wait()
        for p in added:
            p.unlink()
        everything = [x for i in alive for x in results[i]]
        owner.kill()
        print(json.dumps({
            "clients": a.clients, "owner_at_end": owner_pid(cache), "locates_per_client": per_round * a.rounds, "retriever": a.retriever,
            "kill_owner": a.kill_owner, "distinct": a.distinct,
            "p50_ms": round(statistics.median(everything), 1), "p99_ms": round(percentile(everything, 0.99), 1),
            "per_client_p50_p99_ms": {i: [round(statistics.median(results[i]), 1),
                                          round(percentile(results[i], 0.99), 1)] for i in alive},
            "errors": len(errors), "first_errors": errors[:3],
            "sees_every_edit": not missed, "missed": missed[:5],
            "eval_exit": [p.returncode for p in side], "wall_s": round(wall, 1),
        }), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
