#!/usr/bin/env python3
"""Issue 60's rule for shipping adapters, read off `--eval --out` directories.

    scripts/eval/ship_rule.py --base-multi B --cand-multi C [--base-py B51 B55 --cand-py C51 C55]

Multi-language dev set (every instance with gold): hybrid MRR and recall@20 each rise by at
least 0.02, and no language's hybrid MRR falls by more than 0.02. Python dev set (all 106, one
directory or the 51 and the 55): hybrid PR@5 falls by at most one instance and MRR does not
fall. Prints each figure, base → candidate, and the verdict; exits 0 when the rule holds, 1
when it does not, 2 on bad input.
"""
import argparse, sys
from collections import defaultdict

from eval_runs import ok_rows


def rows(dirs):
    out = {}
    for d in dirs:
        out.update({i: r for i, r in ok_rows(d).items() if "hybrid" in r["metrics"]})
    return out


def mean(rs, key):
    return sum(r["metrics"]["hybrid"][key] for r in rs) / len(rs) if rs else 0.0


def paired(base, cand, label):
    missing = sorted(set(base) ^ set(cand))
    if missing:
        print(f"{label}: the two runs score different instances ({len(missing)}, e.g. {missing[0]})", file=sys.stderr)
        sys.exit(2)
    ids = sorted(base)
    return [base[i] for i in ids], [cand[i] for i in ids]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-multi", required=True)
    ap.add_argument("--cand-multi", required=True)
    ap.add_argument("--base-py", nargs="+")
    ap.add_argument("--cand-py", nargs="+")
    a = ap.parse_args()
    ok = True
    b, c = paired(rows([a.base_multi]), rows([a.cand_multi]), "multi")
    for key in ("mrr", "recall@20"):
        d = mean(c, key) - mean(b, key)
        held = d >= 0.02
        ok &= held
        print(f"multi {len(b)}: hybrid {key} {mean(b, key):.3f} -> {mean(c, key):.3f} ({d:+.3f}; needs +0.020) {'ok' if held else 'FAILS'}")
    by_lang = defaultdict(lambda: ([], []))
    for rb, rc in zip(b, c):
        by_lang[rb.get("language", "?")][0].append(rb)
        by_lang[rb.get("language", "?")][1].append(rc)
    for lang in sorted(by_lang):
        lb, lc = by_lang[lang]
        d = mean(lc, "mrr") - mean(lb, "mrr")
        held = d >= -0.02
        ok &= held
        print(f"  {lang:11s} n={len(lb):3d} hybrid MRR {mean(lb, 'mrr'):.3f} -> {mean(lc, 'mrr'):.3f} ({d:+.3f}) {'ok' if held else 'FAILS (falls > 0.02)'}")
    if a.base_py and a.cand_py:
        b, c = paired(rows(a.base_py), rows(a.cand_py), "python")
        pb = sum(r["metrics"]["hybrid"]["perfect_recall@5"] for r in b)
        pc = sum(r["metrics"]["hybrid"]["perfect_recall@5"] for r in c)
        held = pc >= pb - 1
        ok &= held
        print(f"python {len(b)}: hybrid PR@5 {pb:.0f} -> {pc:.0f} instances {'ok' if held else 'FAILS (more than one lost)'}")
        d = mean(c, "mrr") - mean(b, "mrr")
        held = d >= 0
        ok &= held
        print(f"python {len(b)}: hybrid MRR {mean(b, 'mrr'):.3f} -> {mean(c, 'mrr'):.3f} ({d:+.3f}) {'ok' if held else 'FAILS'}")
    else:
        print("python: not given; the rule is only half checked")
        ok = False
    print("SHIP" if ok else "DO NOT SHIP")
    sys.exit(0 if ok else 1)


main()
