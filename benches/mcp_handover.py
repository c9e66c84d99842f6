"""Issue 81's hand-over check: CLIENTS MCP servers on one copy of a checkout, LOCATES `locate`s
each while `utils.py` gains a function five times; the owner's client finishes early (its
server ends and another takes the checkout over), then every client asks for the last function.
Prints `ERR` for a call that failed and, last, one JSON line: which servers took over and, per
client, whether its final `locate` found the last function.

    python3 benches/mcp_handover.py BIN REQUESTS_CHECKOUT 8 60 [--retriever bm25] ...
    (OWNER_LOCATES=5: the owner's client stops after 5; LATE=1: the last edit as the owner ends)
"""
import asyncio, os, sys, shutil, tempfile, time, json, random
from pathlib import Path
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = sys.argv[1]; SRC = Path(sys.argv[2]); CLIENTS = int(sys.argv[3]); LOCATES = int(sys.argv[4])
LATE = os.environ.get("LATE") == "1"
EXTRA = sys.argv[5:]
ISSUES = ["The session does not keep cookies between redirects", "Timeout is ignored when a proxy is configured",
          "Unicode characters in the URL are encoded twice", "Headers given as bytes are rejected"]

async def main():
    home = Path(tempfile.mkdtemp(prefix="handover-"))
    repo = home / "repo"; shutil.copytree(SRC, repo / "requests")
    env = {**os.environ, "CORET_CACHE_DIR": str(home / "cache"), "CORET_OFFLINE": "1"}
    params = StdioServerParameters(command="nice", args=["-n", "10", BIN, "--mcp", str(repo), *EXTRA], env=env)
    utils = repo / "requests" / "utils.py"
    logs = [open(home / f"s{i}.log", "w+") for i in range(CLIENTS)]
    last = {"name": None}; done_edits = asyncio.Event(); results = {}
    owner_final = asyncio.Event(); owner_up = asyncio.Event(); all_up = asyncio.Event(); up = [0]
    async def editor():
        await all_up.wait()
        for k in range(5):
            if k == 4 and LATE: await owner_final.wait(); await asyncio.sleep(random.uniform(0, 0.3))
            else: await asyncio.sleep(random.uniform(0.3, 1.5))
            name = f"added_helper_number_{k}"
            with open(utils, "a") as f: f.write(f"\n\ndef {name}(value):\n    return value\n")
            last["name"] = name
        done_edits.set()
    async def client(i):
        if i: await owner_up.wait()
        async with stdio_client(params, errlog=logs[i]) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                await s.call_tool("locate", {"issue": ISSUES[0], "top_k": 1})
                owner_up.set(); up[0] += 1
                if up[0] == CLIENTS: all_up.set()
                await all_up.wait()
                errs = 0
                for n in range(LOCATES if i else int(os.environ.get("OWNER_LOCATES", LOCATES))):
                    r_ = await s.call_tool("locate", {"issue": ISSUES[(i + n) % 4], "top_k": 10})
                    errs += r_.isError
                    if r_.isError: print("ERR", i, n, "".join(c.text for c in r_.content)[:300], file=sys.stderr)
                if i == 0 and LATE:
                    while last["name"] != "added_helper_number_3": await asyncio.sleep(0.01)
                    owner_final.set()
                else:
                    await done_edits.wait()
                if i: await asyncio.sleep(random.uniform(0, 1.0))
                t = time.time()
                want = last["name"]
                r_ = await s.call_tool("locate", {"issue": want, "top_k": 3})
                if r_.isError:
                    res = ("ERROR", "".join(c.text for c in r_.content)[:300])
                else:
                    names = [c["name"] for f in r_.structuredContent["files"] for c in f["chunks"]]
                    res = (want in names, want, names)
                results[i] = (res, round(t, 3), round(time.time() - t, 3), errs)
        if i == 0: results["owner_closed"] = round(time.time(), 3)
    await asyncio.gather(editor(), *(client(i) for i in range(CLIENTS)))
    for l in logs: l.flush()
    took = [i for i in range(CLIENTS) if "owns it now" in (home / f"s{i}.log").read_text()]
    print(json.dumps({"home": str(home), "took_over": took, "results": results}))
asyncio.run(main())
