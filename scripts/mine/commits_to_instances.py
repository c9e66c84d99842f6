#!/usr/bin/env python3
"""Instances for `--eval` from chosen fix commits: the commit's parent is the snapshot, its
message the issue text, its diff the gold (eval finds the edited chunks itself).

    scripts/mine/commits_to_instances.py LIST MIRRORS > OUT.jsonl

LIST: `OWNER/NAME<TAB>SHA<TAB>LANGUAGE` per line (`#` lines ignored), e.g.
scripts/mine/newcomer-fixes.tsv. MIRRORS holds the bare repositories as `fetch` lays them out
(OWNER+NAME/repo). Nothing mined is committed: the list is, and this rebuilds the file.
"""
import json
import subprocess
import sys
from pathlib import Path


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(repo), *args], check=True, capture_output=True, text=True).stdout


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    listing, mirrors = Path(sys.argv[1]), Path(sys.argv[2])
    for n, line in enumerate(listing.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            repo, sha, language = line.split("\t")[:3]
        except ValueError:
            print(f"{listing}:{n}: want OWNER/NAME, SHA and LANGUAGE separated by tabs", file=sys.stderr)
            return 2
        git_dir = mirrors / repo.replace("/", "+", 1) / "repo"
        if not git_dir.is_dir():
            print(f"{listing}:{n}: no mirror of {repo} at {git_dir}", file=sys.stderr)
            return 2
        full = git(git_dir, "rev-parse", sha).strip()
        print(json.dumps({
            "instance_id": f"{repo.replace('/', '__')}-{full[:8]}",
            "repo": repo,
            "base_commit": git(git_dir, "rev-parse", f"{full}^").strip(),
            "problem_statement": git(git_dir, "show", "-s", "--format=%B", full).strip(),
            "patch": git(git_dir, "show", "--format=", "--no-color", "--no-ext-diff", full),
            "language": language,
            "created_at": git(git_dir, "show", "-s", "--format=%cI", full).strip(),
        }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
