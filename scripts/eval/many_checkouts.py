#!/usr/bin/env python3
"""Several checkouts as one (issue 71, item 2), measured on the questions set: each question
asked of its own checkout alone and of all ten checkouts together (`coret-tui DIR1 … DIR10
--query`), scored by the rank of its first answer file among the file rows (a row of another
checkout never counts). The ten checkouts are written once from the mirrors at their pinned
commits.

    scripts/eval/many_checkouts.py BIN MIRRORS WORKDIR [--dense static] [--limit N] [--out FILE]
        [--fusions union,each]

`--fusions` names how the hybrid spans checkouts (`--many-fusion`): `union` (shipped) fuses
their lists once, `each` merges each checkout's own hybrid by score.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RETRIEVERS = ["bm25", "hybrid"]


def checkout(mirrors, workdir, repo, commit):
    name = repo.replace("/", "+")
    dest = workdir / name
    if not (dest / ".done").exists():
        dest.mkdir(parents=True, exist_ok=True)
        git = subprocess.Popen(["git", "--git-dir", str(mirrors / name / "repo"), "archive", commit], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(dest)], stdin=git.stdout, check=True)
        if git.wait() != 0:
            sys.exit(f"git archive {repo}@{commit} failed")
        (dest / ".done").write_text(commit)
    return dest


def ask(binary, dirs, query, dense, extra=()):
    cmd = [binary, *map(str, dirs), "--query", query, "--json", "--top", "100",
           "--retriever", ",".join(RETRIEVERS), "--dense", dense, *extra]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd[:3])}…: exit {out.returncode}: {out.stderr.strip()[-400:]}")
    return json.loads(out.stdout)


def first_gold(answer, retriever, repo_name, gold, many):
    for row in answer["files"][retriever]:
        if many and row.get("repo") != repo_name:
            continue
        if row["path"] in gold:
            return row["rank"]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("mirrors", type=Path)
    ap.add_argument("workdir", type=Path)
    ap.add_argument("--dense", default="static")
    ap.add_argument("--limit", type=int, default=0, help="questions per repository (0: all)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--fusions", default="union")
    a = ap.parse_args()
    fusions = a.fusions.split(",")
    questions = []
    for f in sorted((ROOT / "data/questions").glob("*.jsonl")):
        rows = [json.loads(l) for l in f.read_text().splitlines() if l.strip()]
        questions += rows[: a.limit] if a.limit else rows
    dirs = {}
    for q in questions:
        dirs.setdefault(q["repo"], checkout(a.mirrors, a.workdir, q["repo"], q["commit"]))
    every = list(dirs.values())
    rows = []
    for i, q in enumerate(questions):
        own = dirs[q["repo"]]
        alone = ask(a.binary, [own], q["query"], a.dense)
        row = {"id": q["id"]}
        for r in RETRIEVERS:
            row[f"{r}_alone"] = first_gold(alone, r, own.name, set(q["files"]), False)
        for f in fusions:
            together = ask(a.binary, every, q["query"], a.dense, ["--many-fusion", f])
            for r in RETRIEVERS:
                row[f"{r}_{f}"] = first_gold(together, r, own.name, set(q["files"]), True)
        rows.append(row)
        print(f"{i + 1}/{len(questions)} {q['id']}: {row}", file=sys.stderr)
    if a.out:
        a.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    n = len(rows)
    print(f"{n} questions, {len(every)} checkouts, --dense {a.dense}; file rows, first answer file")
    print("| ranking | checkouts | MRR | found in top 1 | top 5 | top 10 | lower than alone |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in RETRIEVERS:
        # BM25's lists do not depend on the fusion: one row.
        sides = ["alone"] + (fusions[:1] if r == "bm25" else fusions)
        for side in sides:
            ranks = [row[f"{r}_{side}"] for row in rows]
            mrr = sum(1 / x for x in ranks if x) / n
            top = lambda k: sum(1 for x in ranks if x and x <= k) / n
            worse = "" if side == "alone" else str(sum(
                1 for row in rows if (row[f"{r}_{side}"] or 999) > (row[f"{r}_alone"] or 999)))
            label = "its own alone" if side == "alone" else f"all {len(every)} as one ({side})"
            print(f"| {r} | {label} | {mrr:.3f} | {top(1):.3f} | {top(5):.3f} | {top(10):.3f} | {worse} |")


if __name__ == "__main__":
    main()
