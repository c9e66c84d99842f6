"""`coret-tui --mcp REPO --store-search` through the official Python MCP SDK: the agent
server's dense side ranked in the team's store, with no vector pulled from it.

Usage: python3 tests/mcp_store.py BINARY REPO MODEL CACHE STORE_URL
Run by tests/store_pg.rs against a real server that a first machine filled. Exits 0 when every
check passed.
"""

import asyncio
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def check(condition, what, got=None):
    if not condition:
        raise AssertionError(f"{what}; got: {got!r}")


async def main(binary, repo, model, cache, store):
    env = {"CORET_CACHE_DIR": cache, "CORET_MODEL": model, "CORET_OFFLINE": "1",
           "CORET_DENSE": "transformer", "CORET_STORE": store}
    params = StdioServerParameters(command=binary, args=["--mcp", repo, "--store-search"], env=env)
    async with stdio_client(params) as (read, write_):
        async with ClientSession(read, write_) as session:
            await session.initialize()
            deadline = time.monotonic() + 120
            while True:
                result = await session.call_tool("locate", {"issue": "the cart total price", "retriever": "hybrid"})
                check(not result.isError, "locate succeeds", result)
                answer = result.structuredContent
                if answer.get("dense_tier") == "transformer" or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
            check(answer["retriever"] == "hybrid" and answer["dense_tier"] == "transformer",
                  "the hybrid with the transformer's side, ranked in the store", answer)
            check(answer["dense_ready"], "the dense side is complete", answer)
            store = answer["store"]
            check(store["pulled"] == 0 and store["pushed"] == 0 and store["trouble"] is None,
                  "nothing pulled, nothing to give: the store held every input", store)
            check(len(answer["files"]) > 0, "an answer", answer)
    print("mcp store: all checks passed")


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit("usage: python3 tests/mcp_store.py BINARY REPO MODEL CACHE STORE_URL")
    asyncio.run(main(*sys.argv[1:]))
