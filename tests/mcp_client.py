"""An independent MCP client for `coret-tui --mcp`: the official Python SDK (`pip install mcp`)
starts the server on stdio, lists its tools and calls them on a fixture repository written here.

Usage: python3 tests/mcp_client.py PATH/TO/coret-tui
Run by tests/cli_mcp.rs with the binary cargo built. BM25 only: no model is needed. Exits 0
when every check passed; a failed check raises with what was expected and what came back.
"""

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PRICING = '''"""Prices and discounts."""


def apply_discount(amount, rate=0.1):
    """Take the loyalty discount off an amount."""
    return amount * (1 - rate)
'''

CART = '''from shop.pricing import apply_discount


class Cart:
    """A shopping cart."""

    def __init__(self):
        self.items = []

    def total(self):
        subtotal = sum(price for price in self.items)
        return apply_discount(subtotal)
'''

TESTS = '''from shop.cart import Cart


def test_total_applies_the_loyalty_discount():
    assert Cart().total() == 0
'''

SHIPPING = '''def parcel_shipping_cost(weight_kg):
    """Shipping cost of a parcel by its weight."""
    return 4.5 + 1.2 * weight_kg
'''

INVOICE = '''def render_invoice_pdf(order):
    """Render an order's invoice as a PDF document."""
    return pdf_document(order.lines)


def pdf_document(lines):
    return b"%PDF" + b"".join(lines)
'''


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def check(condition, what, got=None):
    if not condition:
        raise AssertionError(f"{what}; got: {got!r}")


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def call_ok(session, tool, args):
    result = await session.call_tool(tool, args)
    check(not result.isError, f"{tool}({args}) succeeds", text_of(result))
    check(result.structuredContent is not None, f"{tool} returns structured content", result)
    return result.structuredContent


async def call_refused(session, tool, args, *needles):
    result = await session.call_tool(tool, args)
    message = text_of(result)
    check(result.isError, f"{tool}({args}) is refused", message)
    for needle in needles:
        check(needle in message, f"{tool}({args})'s error mentions {needle!r}", message)
    return message


def server(binary, repo, home, *extra):
    env = {
        "CORET_CACHE_DIR": str(home / "cache"),
        "CORET_DATA_DIR": str(home / "data"),
        "CORET_MODEL": "/nonexistent",
        "CORET_OFFLINE": "1",
    }
    return StdioServerParameters(command=binary, args=["--mcp", str(repo), *extra], env=env)


def hits(answer):
    """The located chunks in rank order: `locate` nests them under their files."""
    chunks = [c for f in answer["files"] for c in f["chunks"]]
    return sorted(chunks, key=lambda c: c.get("rank", 0))


async def bm25_session(binary, repo, home, outside):
    async with stdio_client(server(binary, repo, home, "--retriever", "bm25")) as (read, write_):
        async with ClientSession(read, write_) as session:
            init = await session.initialize()
            check(init.serverInfo.name == "coret-tui", "the server names itself", init.serverInfo)
            check(init.capabilities.tools is not None, "the server offers tools", init.capabilities)

            tools = {t.name: t for t in (await session.list_tools()).tools}
            check(set(tools) == {"locate", "neighbours", "read"}, "three tools", sorted(tools))
            locate_schema = tools["locate"].inputSchema
            check(locate_schema["required"] == ["issue"], "locate needs only the issue", locate_schema)
            props = locate_schema["properties"]
            check({"issue", "top_k", "retriever", "include_tests"} <= set(props), "locate's arguments", props)
            check("bm25" in str(props["retriever"]) and "hybrid" in str(props["retriever"]), "retriever names", props)
            check(set(tools["read"].inputSchema["required"]) == {"path", "start_line", "end_line"}, "read's arguments",
                  tools["read"].inputSchema)
            for t in tools.values():
                check(len(t.description or "") > 40, f"{t.name} is described", t.description)
                check(t.outputSchema is not None, f"{t.name} declares its answer", t)

            issue = "The loyalty discount is taken off twice when the cart total is computed"
            answer = await call_ok(session, "locate", {"issue": issue})
            check(answer["retriever"] == "bm25" and answer["retrievers_used"] == ["bm25"], "BM25 answered", answer)
            check(answer["dense_ready"] is False and answer["dense_status"].startswith("off"), "dense is off", answer)
            names = [(h["path"], h["name"]) for h in hits(answer)]
            check(("shop/pricing.py", "apply_discount") in names[:3], "the discount is found", names)
            check(all(not h["path"].startswith("tests/") for h in hits(answer)), "tests left out", names)
            hit = next(h for h in hits(answer) if h["name"] == "apply_discount")
            check(hit["kind"] == "function" and (hit["start_line"], hit["end_line"]) == (4, 6), "its span", hit)
            check(hit["code"].startswith("def apply_discount(amount, rate=0.1):"), "its code", hit["code"])
            one = await call_ok(session, "locate", {"issue": issue, "top_k": 1, "include_tests": True})
            check(len(hits(one)) == 1, "top_k is honoured", hits(one))
            await call_refused(session, "locate", {"issue": issue, "top_k": 500}, "top_k", "500")
            await call_refused(session, "locate", {"issue": "   "}, "issue")

            around = await call_ok(session, "neighbours", {"path": "shop/pricing.py", "name": "apply_discount"})
            callers = [n["location"] for d in around["definitions"] for n in d["callers"]]
            check("shop/cart.py:10" in callers, "Cart.total calls apply_discount", around)
            total = await call_ok(session, "neighbours", {"path": "shop/cart.py", "name": "Cart.total"})
            callees = [(n["path"], n["name"]) for n in total["definitions"][0]["callees"]]
            check(("shop/pricing.py", "apply_discount") in callees, "and is its callee", total)
            await call_refused(session, "neighbours", {"path": "shop/cart.py", "name": "checkout"}, "checkout")

            lines = await call_ok(session, "read", {"path": "shop/cart.py", "start_line": 4, "end_line": 5})
            check(lines["text"] == 'class Cart:\n    """A shopping cart."""', "read returns the lines", lines)
            check(lines["total_lines"] == 12, "and the file's length", lines)
            await call_refused(session, "read", {"path": "shop/cart.py", "start_line": 1, "end_line": 401}, "400")
            await call_refused(session, "read", {"path": "../outside.py", "start_line": 1, "end_line": 1},
                               "../outside.py", "outside")
            await call_refused(session, "read", {"path": str(outside), "start_line": 1, "end_line": 1},
                               str(outside), "absolute")
            os.symlink(outside, repo / "link.py")
            await call_refused(session, "read", {"path": "link.py", "start_line": 1, "end_line": 1},
                               "link.py", "outside")
            os.remove(repo / "link.py")

            # An edit shows up in the next call: the index is re-read before each one.
            write(repo, "shop/shipping.py", SHIPPING)
            fresh = await call_ok(session, "locate", {"issue": "parcel shipping cost by weight"})
            check(fresh["index"]["cache"] == "updated", "the cache saw the edit", fresh["index"])
            top = hits(fresh)[0]
            check((top["path"], top["name"]) == ("shop/shipping.py", "parcel_shipping_cost"), "the new code ranks", top)
            write(repo, "shop/shipping.py", SHIPPING.replace("parcel_shipping_cost", "freight_rate"))
            renamed = await call_ok(session, "locate", {"issue": "parcel shipping cost by weight"})
            check(hits(renamed)[0]["name"] == "freight_rate", "a rename shows up too", hits(renamed)[0])


async def static_tier_session(binary, repo, home):
    """By default the static tier answers at once, with no model at all, and says so."""
    async with stdio_client(server(binary, repo, home)) as (read, write_):
        async with ClientSession(read, write_) as session:
            await session.initialize()
            deadline = time.monotonic() + 60
            while True:
                answer = await call_ok(session, "locate", {"issue": "loyalty discount", "retriever": "hybrid"})
                if answer.get("dense_tier") == "static" or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
            check(answer["retriever"] == "hybrid" and answer["dense_tier"] == "static",
                  "the static tier ranks the hybrid", answer)
            # The discount's definition and the cart that applies it both answer; the definition's
            # file is among the first two (the fixture's four files rank close in the static tier).
            files = [f["path"] for f in answer["files"]]
            check("shop/pricing.py" in files[:2], "the discount code among the first files", files)


async def several_session(binary, repo, billing, home):
    """`--mcp REPO BILLING`: one ranking over both checkouts, each row naming its own;
    `neighbours` and `read` take the checkout's name."""
    async with stdio_client(server(binary, repo, home, str(billing))) as (read, write_):
        async with ClientSession(read, write_) as session:
            init = await session.initialize()
            check("repo" in init.instructions and "billing" in init.instructions,
                  "the instructions name both checkouts", init.instructions)
            deadline = time.monotonic() + 60
            while True:
                answer = await call_ok(session, "locate", {"issue": "the invoice PDF is rendered without lines"})
                if answer.get("dense_tier") == "static" or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
            check(answer["retriever"] == "hybrid" and answer["dense_tier"] == "static",
                  "the hybrid over the union, with the static tier", answer)
            names = [r["name"] for r in answer["repos"]]
            check(names == ["repo", "billing"], "the answer lists both checkouts in order", answer["repos"])
            check(answer["index"]["chunks"] == sum(r["index"]["chunks"] for r in answer["repos"]),
                  "index sums the checkouts", answer)
            top = hits(answer)[0]
            check((top["repo"], top["path"], top["name"]) == ("billing", "billing/invoice.py", "render_invoice_pdf"),
                  "the invoice code of billing first", top)
            check(all(f["repo"] in names for f in answer["files"]), "every file names its checkout", answer["files"])
            discount = await call_ok(session, "locate", {"issue": "The loyalty discount is taken off twice"})
            top = hits(discount)[0]
            check((top["repo"], top["name"]) == ("repo", "apply_discount"), "the discount code of repo first", top)

            await call_refused(session, "neighbours", {"path": "billing/invoice.py", "name": "pdf_document"},
                               "repo", "billing")
            await call_refused(session, "neighbours",
                               {"repo": "nowhere", "path": "billing/invoice.py", "name": "pdf_document"}, "nowhere")
            around = await call_ok(session, "neighbours",
                                   {"repo": "billing", "path": "billing/invoice.py", "name": "pdf_document"})
            callers = [n["name"] for d in around["definitions"] for n in d["callers"]]
            check(around["repo"] == "billing" and callers == ["render_invoice_pdf"], "callers within billing", around)
            lines = await call_ok(session, "read",
                                  {"repo": "repo", "path": "shop/pricing.py", "start_line": 4, "end_line": 4})
            check(lines["repo"] == "repo" and lines["text"].startswith("def apply_discount"), "read in repo", lines)
            await call_refused(session, "read", {"path": "shop/pricing.py", "start_line": 1, "end_line": 1}, "repo")


async def no_model_session(binary, repo, home):
    """The transformer alone (--dense transformer): a missing model leaves BM25 answering."""
    async with stdio_client(server(binary, repo, home, "--dense", "transformer")) as (read, write_):
        async with ClientSession(read, write_) as session:
            await session.initialize()
            deadline = time.monotonic() + 60
            while True:
                answer = await call_ok(session, "locate", {"issue": "loyalty discount", "retriever": "hybrid"})
                if answer["dense_status"] != "loading the model" or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
            check(answer["dense_status"].startswith("unavailable") and "/nonexistent" in answer["dense_status"],
                  "the missing model is named", answer["dense_status"])
            check(answer["retriever"] == "bm25" and "answered by bm25" in (answer["note"] or ""),
                  "a hybrid request falls back to BM25 and says so", answer)


async def main(binary: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        repo, home = base / "repo", base / "home"
        write(repo, "shop/__init__.py", "")
        write(repo, "shop/pricing.py", PRICING)
        write(repo, "shop/cart.py", CART)
        write(repo, "tests/test_cart.py", TESTS)
        outside = base / "outside.py"
        outside.write_text("SECRET = 'not for agents'\n")
        await bm25_session(binary, repo, home, outside)
        await no_model_session(binary, repo, home)
        await static_tier_session(binary, repo, home)
        billing = base / "billing"
        write(billing, "billing/invoice.py", INVOICE)
        await several_session(binary, repo, billing, home)
    print("mcp client: all checks passed")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 tests/mcp_client.py PATH/TO/coret-tui")
    asyncio.run(main(sys.argv[1]))
