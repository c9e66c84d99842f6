"""Several `coret-tui --mcp` servers on one checkout, through the official Python MCP SDK: the
first owns the index (here a server no client talks to, so that killing it breaks no client's
session), the others attach to it; every client sees every edit; a SIGKILL of the owner costs
the others nothing (one of them takes the checkout over).

Usage: python3 tests/mcp_many.py PATH/TO/coret-tui
Run by tests/cli_mcp.rs. BM25 only: no model is needed. Exits 0 when every check passed.
"""

import asyncio
import os
import signal
import subprocess
import time
import sys
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcp_client import check, hits, write

PRICING = '''def apply_discount(amount, rate=0.1):
    """Take the loyalty discount off an amount."""
    return amount * (1 - rate)
'''

SHIPPING = '''def parcel_shipping_cost(weight_kg):
    """Shipping cost of a parcel by its weight."""
    return 4.5 + 1.2 * weight_kg
'''

CLIENTS = 3


def env(home):
    return {"CORET_CACHE_DIR": str(home / "cache"), "CORET_DATA_DIR": str(home / "data"), "CORET_OFFLINE": "1"}


def args(repo):
    return ["--mcp", str(repo), "--retriever", "bm25"]


def params(binary, repo, home):
    return StdioServerParameters(command=binary, args=args(repo), env=env(home))


async def locate(session, issue):
    result = await session.call_tool("locate", {"issue": issue, "top_k": 5})
    text = "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")
    check(not result.isError, f"locate({issue!r}) succeeds", text)
    return [(h["path"], h["name"]) for h in hits(result.structuredContent)]


def server_pids(home):
    """The `coret-tui --mcp` processes serving this test's checkout."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if proc.name.isdigit() and b"--mcp" in cmdline and str(home / "repo").encode() in cmdline:
            pids.append(int(proc.name))
    return pids


def owner_pid(home):
    locks = list((home / "cache").rglob("owner.lock"))
    check(len(locks) == 1, "one owner for the checkout", locks)
    return int(locks[0].read_text().strip())


async def main(binary):
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        repo = home / "repo"
        write(repo, "shop/pricing.py", PRICING)
        write(repo, "shop/shipping.py", SHIPPING)
        logs = [open(home / f"server{i}.log", "w+") for i in range(CLIENTS)]
        # The owner: the first server on the checkout, its stdin held open, no client on it.
        owner = subprocess.Popen([binary, *args(repo)], env={**os.environ, **env(home)},
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while not list((home / "cache").rglob("owner.sock")) and time.time() < deadline:
            time.sleep(0.05)
        check(owner_pid(home) == owner.pid, "the first server owns the checkout", owner_pid(home))
        async with AsyncExitStack() as stack:
            sessions = []
            for i in range(CLIENTS):
                read, write_ = await stack.enter_async_context(stdio_client(params(binary, repo, home), errlog=logs[i]))
                session = await stack.enter_async_context(ClientSession(read, write_))
                await session.initialize()
                sessions.append(session)
                found = await locate(session, "the loyalty discount is wrong")
                check(found[0] == ("shop/pricing.py", "apply_discount"), f"client {i} finds the discount", found)
            first = owner_pid(home)
            check(first == owner.pid, "still the first server", first)
            for log in logs:
                log.flush()
            said = [(home / f"server{i}.log").read_text() for i in range(CLIENTS)]
            for i in range(CLIENTS):
                check("attached to the server that owns it" in said[i], f"server {i} attached", said[i])

            # An edit on disk: every client's next answer has it.
            write(repo, "shop/refunds.py", "def refund_order(order):\n    return order.total\n")
            for i, session in enumerate(sessions):
                found = await locate(session, "refund_order for an order")
                check(found[0] == ("shop/refunds.py", "refund_order"), f"client {i} sees the new file", found)

            # The owner killed: the others go on, one of them owning the checkout now.
            os.kill(first, signal.SIGKILL)
            owner.wait()
            write(repo, "shop/returns.py", "def accept_return(parcel):\n    return parcel\n")
            for i, session in enumerate(sessions):
                found = await locate(session, "accept_return of a parcel")
                check(found[0] == ("shop/returns.py", "accept_return"), f"client {i} after the owner died", found)
            check(owner_pid(home) != first, "another server owns the checkout", owner_pid(home))
            check(owner_pid(home) in [p for p in server_pids(home)], "a client's server owns it now", owner_pid(home))
    print("all checks passed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
