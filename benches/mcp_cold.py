"""The MCP server's first answers on a never-indexed repository (`pip install mcp`).

Usage: CORET_CACHE_DIR=$(mktemp -d) python3 benches/mcp_cold.py BINARY REPO ISSUE_FILE

From the server's launch: `initialize`; the first `locate` of the issue with the default
retriever (it waits at most 5 s for the dense side, else BM25 answers alone and says so); then
the same call once a second until the answer is a hybrid over the issue's own chunks, embedded
first in the background. Prints one JSON object: seconds, the retrievers each answer used and
its dense coverage.
"""

import asyncio
import json
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main():
    binary, repo, issue_file = sys.argv[1:4]
    issue = Path(issue_file).read_text()
    params = StdioServerParameters(command=binary, args=["--mcp", str(Path(repo).resolve())])
    out = {"repo": repo}
    launched = time.perf_counter()
    since = lambda: round(time.perf_counter() - launched, 1)

    async def locate():
        result = await session.call_tool("locate", {"issue": issue, "top_k": 10})
        if result.isError:
            raise RuntimeError(f"locate failed: {result.content}")
        answer = result.structuredContent
        cov = answer.get("dense_coverage") or {}
        return {"s": since(), "used": answer["retrievers_used"], "coverage": [cov.get("ranked"), cov.get("of")],
                "note": answer.get("note")}

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            out["initialize_s"] = since()
            out["first"] = await locate()
            answer = out["first"]
            while "dense" not in answer["used"]:
                await asyncio.sleep(1)
                answer = await locate()
            out["hybrid"] = answer
    print(json.dumps(out))


asyncio.run(main())
