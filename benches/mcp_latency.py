"""Benchmark of `coret-tui --mcp` through the official Python MCP client (`pip install mcp`).

Usage: python3 benches/mcp_latency.py BINARY REPO [--retriever bm25|hybrid] [--runs 20] [--no-model] [--long]

Measures, on a real checkout REPO (a scratch copy: the script appends a function to one of its
files and removes it again):
  - start: server launch to the first `locate` answer (indexing included; warm or cold cache
    as the cache directory finds it);
  - dense: with `--retriever hybrid`, launch to the first answer with the dense index ready;
  - warm locate latency: median and 90th percentile of `--runs` calls, ten different issues
    (with `--long`, each followed by a report body twice: about 3,700 characters, more than
    the 512 tokens the query tower reads);
  - save -> locate: a file edited on disk to the first answer that finds the new function;
  - peak RSS of the server process (VmHWM).
Prints one JSON object. The cache directory is CORET_CACHE_DIR when set.
"""

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ISSUES = [
    "The session does not keep cookies between redirects",
    "Timeout is ignored when a proxy is configured",
    "Printing a matrix with symbols raises an exception",
    "simplify returns a wrong result for trigonometric expressions",
    "Unicode characters in the URL are encoded twice",
    "The solver hangs on a polynomial with rational coefficients",
    "Headers given as bytes are rejected with a confusing error",
    "Integration of a piecewise function gives the wrong sign",
    "Retries do not back off after a connection error",
    "The latex printer drops parentheses around a negative power",
]


# A bug report's usual body: steps, a traceback, versions. Appended with --long.
BODY = """

Steps to reproduce: create a fresh environment, install the package from the main branch and
run the snippet below. The call returns without an error the first time, but the second call
with the same arguments raises, and the state of the object after the first call is not what
the documentation describes. I would expect both calls to behave the same way.

```python
from package import api
session = api.Session(timeout=10, retries=3)
result = session.request("GET", "/items", params={"page": 2, "limit": 50}, stream=False)
print(result.status, result.headers.get("content-type"), len(result.content))
result = session.request("GET", "/items", params={"page": 2, "limit": 50}, stream=False)
```

Traceback (most recent call last):
  File "example.py", line 5, in <module>
    result = session.request("GET", "/items", params={"page": 2, "limit": 50}, stream=False)
  File "package/api.py", line 412, in request
    response = self.send(prepared, **send_kwargs)
  File "package/api.py", line 655, in send
    r = adapter.send(request, **kwargs)
  File "package/adapters.py", line 498, in send
    raise ConnectionError(err, request=request)
package.exceptions.ConnectionError: the pool was closed while a request was still using it

What I tried: passing a new session each time works; lowering the number of retries does not
change anything; the same code on the previous release works. Looking at the code, the pool
seems to be closed in a finally block when the first response is read completely, and the
second request then reuses the closed pool instead of opening a new one. A check of the pool
state before it is reused, or reopening it lazily, would probably fix it. Environment: Linux,
Python 3.11, the latest release and the main branch, installed with pip in a virtualenv.
"""


def server_pid(repo: Path):
    """The server's pid, found by its command line (the SDK does not expose it)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--mcp" in cmd and str(repo).encode() in cmd:
            return int(entry.name)
    return None


def peak_rss_mib(pid):
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


async def locate(session, issue, retriever):
    args = {"issue": issue, "top_k": 10}
    if retriever:
        args["retriever"] = retriever
    result = await session.call_tool("locate", args)
    if result.isError:
        raise RuntimeError(f"locate failed: {result.content}")
    return result.structuredContent


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("repo")
    ap.add_argument("--retriever", default="bm25", choices=["bm25", "hybrid"])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--long", action="store_true", help="issues of about 3,700 characters")
    ap.add_argument("--no-model", action="store_true", help="serve with --retriever bm25: no model loaded, no dense index built")
    opts = ap.parse_args()
    repo = Path(opts.repo).resolve()
    env = dict(os.environ)
    server_args = ["--mcp", str(repo)] + (["--retriever", "bm25"] if opts.no_model else [])
    params = StdioServerParameters(command=opts.binary, args=server_args, env=env)
    out = {"repo": str(repo), "retriever": opts.retriever, "runs": opts.runs, "no_model": opts.no_model,
           "long": opts.long}
    issues = [i + BODY * 2 if opts.long else i for i in ISSUES]
    launched = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            first = await locate(session, ISSUES[0], "bm25")
            out["start_s"] = round(time.perf_counter() - launched, 2)
            out["chunks"] = first.get("index", {}).get("chunks")
            if opts.retriever == "hybrid":
                while True:
                    answer = await locate(session, ISSUES[0], "hybrid")
                    if answer.get("dense_ready"):
                        break
                    await asyncio.sleep(2)
                out["dense_ready_s"] = round(time.perf_counter() - launched, 1)
            times = []
            for i in range(opts.runs):
                t = time.perf_counter()
                answer = await locate(session, issues[i % len(issues)], opts.retriever)
                times.append(time.perf_counter() - t)
                assert answer["retrievers_used"], answer
            times.sort()
            out["locate_median_ms"] = round(1000 * statistics.median(times), 1)
            out["locate_p90_ms"] = round(1000 * times[int(0.9 * (len(times) - 1))], 1)

            # Save -> locate: a new function in an existing file, found by the next call.
            target = repo / first["files"][0]["path"]  # a file the index holds
            original = target.read_bytes()
            name = "zz_benchmark_freshly_saved_function"
            try:
                with open(target, "ab") as f:
                    f.write(f"\n\ndef {name}(quux_parameter):\n    return quux_parameter\n".encode())
                t = time.perf_counter()
                answer = await locate(session, f"{name} quux_parameter", "bm25")
                out["save_to_locate_ms"] = round(1000 * (time.perf_counter() - t), 1)
                out["save_found"] = any(h["name"] == name for f in answer["files"] for h in f["chunks"])
            finally:
                target.write_bytes(original)
            out["peak_rss_mib"] = peak_rss_mib(server_pid(repo))
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
