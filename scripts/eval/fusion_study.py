#!/usr/bin/env python3
"""Replays hybrid fusions over an eval's kept rankings, to choose a fusion without rerunning
the retrievers. Input: `instances.jsonl` of

    coret-tui --eval DEV --repos DIR --retriever bm25,dense,hybrid,history --keep-lists 1000 --out OUT

Usage: fusion_study.py OUT/instances.jsonl [--dense OTHER/instances.jsonl]
(`--dense` swaps in the dense lists of another run, e.g. other `--weights`.) Prints
PR@5 / PR@20 / MRR on the 51 tuning instances (all but sympy), on sympy (held out) and on all.
The engine's fusions are replayed with its formulas (ties, rare with real scores, may order
differently); `engine hybrid` is the run's own hybrid, to compare with its replay."""
import argparse
import json
import math
import re

from eval_runs import all_rows


def key(h):
    return (h["path"], h["name"], h["start_line"])


def load(path):
    out = {}
    for r in all_rows(path):
        if r["status"] == "ok":
            lists = {n: [(key(h), h["score"]) for h in hs] for n, hs in r.get("lists", {}).items()}
            gold = {(g["path"], g["name"], g["start_line"]) for g in r["gold"]}
            out[r["instance_id"]] = (gold, lists)
    return out


def metrics(order, gold):
    pos = {c: i + 1 for i, c in enumerate(order)}
    ranks = [pos.get(g) for g in gold]
    pr = lambda k: float(all(x is not None and x <= k for x in ranks))
    found = [x for x in ranks if x is not None]
    return pr(5), pr(20), (1.0 / min(found) if found else 0.0)


def rrf(wd, wh, k=60.0):
    def fuse(lists):
        s = {}
        for name, w in (("bm25", 1.0), ("dense", wd), ("history", wh)):
            if w > 0:
                for i, (c, _) in enumerate(lists.get(name, [])):
                    s[c] = s.get(c, 0.0) + w / (k + i + 1)
        return s
    return fuse


def standardised(lst, depth):
    # Position i takes the i-th best of the first `depth` scores (test demotion keeps scores).
    xs = sorted((x for _, x in lst[:depth]), reverse=True)
    if not xs:
        return {}
    mean = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs))
    sd = sd if sd > 1e-7 else 1.0
    return {c: (x - xs[-1]) / sd for (c, _), x in zip(lst, xs)}


def score(wd, wh, depth=1000):
    def fuse(lists):
        s = {}
        for name, w in (("bm25", 1.0), ("dense", wd), ("history", wh)):
            if w > 0:
                for c, z in standardised(lists.get(name, []), depth).items():
                    s[c] = s.get(c, 0.0) + w * z
        return s
    return fuse


def file_evidence(base, g):
    """Adds g × the best fused score among the chunk's file's chunks."""
    def fuse(lists):
        s = base(lists)
        best = {}
        for c, v in s.items():
            best[c[0]] = max(best.get(c[0], 0.0), v)
        return {c: v + g * best[c[0]] for c, v in s.items()}
    return fuse


def name_boost(base, w, issue_words):
    """Adds w when the issue names the chunk (its last name part, 4+ characters, no dunder)."""
    def fuse(lists, iid):
        s = base(lists)
        for c in s:
            last = c[1].split(".")[-1]
            if len(last) >= 4 and not last.startswith("__") and last in issue_words[iid]:
                s[c] += w
        return s
    return fuse


def engine(name):
    return lambda lists: {c: -i for i, (c, _) in enumerate(lists.get(name, []))}


def row(label, fuse, data, per_instance=False):
    cells = []
    for pick in (lambda i: not i.startswith("sympy"), lambda i: i.startswith("sympy"), lambda i: True):
        ms = [metrics([c for c, _ in sorted((fuse(l, i) if per_instance else fuse(l)).items(),
                                            key=lambda x: -x[1])], g)
              for i, (g, l) in data.items() if pick(i)]
        cells.append(" / ".join(f"{sum(m[j] for m in ms) / len(ms):.3f}" for j in range(3)))
    print(f"| {label} | " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("instances")
    ap.add_argument("--dense")
    ap.add_argument("--issues", help="the instances file, for the name-boost rows")
    a = ap.parse_args()
    data = load(a.instances)
    if a.dense:
        for iid, (_, lists) in load(a.dense).items():
            data[iid][1]["dense"] = lists["dense"]
    print("| fusion | 51 tuning | 55 sympy (held out) | all 106 |\n| --- | --- | --- | --- |")
    for n in ("bm25", "dense", "hybrid"):
        row(f"engine {n}", engine(n), data)
    row("rrf k 60, dense 0.25, history 0.15 (previous default)", rrf(0.25, 0.15), data)
    for wd in (0.1, 0.5):
        row(f"rrf k 60, dense {wd}, history 0.15", rrf(wd, 0.15), data)
    row("rrf k 10, dense 0.25, history 0.15", rrf(0.25, 0.15, k=10.0), data)
    for depth in (200, 1000):
        for wd in (0.5, 0.75, 1.0, 1.5):
            for wh in (0.0, 0.15):
                row(f"score, depth {depth}, dense {wd}, history {wh}", score(wd, wh, depth), data)
    for g in (0.1, 0.5, 1.0):
        row(f"score, dense 1, + {g} x best score in the file", file_evidence(score(1.0, 0.0), g), data)
    if a.issues:
        words = {}
        for line in open(a.issues):
            r = json.loads(line)
            words[r["instance_id"]] = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", r["problem_statement"]))
        for w in (0.5, 1.0, 4.0):
            row(f"score, dense 1, + {w} if the issue names the chunk", name_boost(score(1.0, 0.0), w, words),
                data, per_instance=True)


if __name__ == "__main__":
    main()
