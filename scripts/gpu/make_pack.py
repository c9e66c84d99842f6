#!/usr/bin/env python3
"""Slim bare repositories for evaluating or training on a machine without the mirrors.

For each base commit of INSTANCES (.jsonl), packs the commit object, every tree under it and
the `.py` blobs, nothing else: enough for coret-tui's snapshot reads (`git ls-tree`,
`git cat-file`), a few MB per repository instead of hundreds.

    scripts/gpu/make_pack.py INSTANCES MIRRORS OUTDIR [--repo-regex RE] [--ext py,rs,...]

MIRRORS holds `<owner>+<name>/repo` bare repositories (the `fetch` layout); OUTDIR gets the
same layout, usable as `--repos OUTDIR`.
"""
import argparse, json, re, shutil, subprocess, sys
from collections import defaultdict
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instances")
    ap.add_argument("mirrors", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--repo-regex", default=".")
    # The blobs a snapshot read needs: the indexed languages' sources (default Python's alone).
    ap.add_argument("--ext", default="py", help="comma-separated extensions of the blobs to keep")
    args = ap.parse_args()
    exts = tuple(("." + e.strip().lstrip(".")).encode() for e in args.ext.split(",") if e.strip())
    commits = defaultdict(set)
    for line in open(args.instances, encoding="utf-8"):
        if line.strip():
            d = json.loads(line)
            if re.search(args.repo_regex, d["repo"]):
                commits[d["repo"].replace("/", "+")].add(d["base_commit"])
    for repo, shas in sorted(commits.items()):
        src, dst = args.mirrors / repo / "repo", args.out / repo / "repo"
        git = lambda *a, **kw: subprocess.run(["git", "--git-dir", str(src), *a], check=True, capture_output=True, **kw)
        objects = {}
        for sha in sorted(shas):
            objects[sha] = ""
            objects[git("rev-parse", f"{sha}^{{tree}}").stdout.decode().strip()] = ""
            # -z: paths verbatim (a non-ASCII name would otherwise come quoted).
            for entry in git("ls-tree", "-r", "-t", "-z", "--full-tree", sha).stdout.split(b"\0"):
                if not entry:
                    continue
                meta, path = entry.split(b"\t", 1)
                _, kind, obj = meta.split()
                if kind == b"tree" or path.endswith(exts):
                    # The path lets pack-objects group similar blobs for deltas.
                    objects[obj.decode()] = path.decode("utf-8", "replace").replace("\n", " ")
        if dst.exists():
            shutil.rmtree(dst)
        subprocess.run(["git", "init", "-q", "--bare", str(dst)], check=True)
        # A mirror may lack a few very large blobs: pack what is there (the snapshot read skips the rest).
        check = git("cat-file", "--batch-check", input="".join(f"{o}\n" for o in objects).encode()).stdout.decode()
        for line in check.splitlines():
            if line.endswith(" missing"):
                objects.pop(line.split()[0], None)
        listing = "".join(f"{o} {p}\n" if p else f"{o}\n" for o, p in objects.items()).encode()
        git("pack-objects", "-q", "--window=30", "--depth=50", str(dst / "objects/pack/pack"), input=listing)
        size = sum(f.stat().st_size for f in dst.rglob("*") if f.is_file())
        print(f"{repo}: {len(shas)} commits, {len(objects)} objects, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
