"""The one reader of `--eval --out` rows (`OUT/instances.jsonl`), for every script that reads
them: a bad line or a missing file is one message naming it, never a traceback."""
import json
import os
import sys


def all_rows(run):
    """Every row of a run, in order: `run` is an `--eval --out` directory or its
    `instances.jsonl`."""
    name = os.path.join(run, "instances.jsonl") if os.path.isdir(run) else str(run)
    rows = []
    try:
        with open(name, encoding="utf-8") as f:
            for k, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    bad(f"{name}:{k}: not JSON ({e})")
    except OSError as e:
        bad(f"{name}: {e.strerror}")
    return rows


def ok_rows(run):
    """Instance id -> row, for the instances the run scored (status "ok", with metrics)."""
    return {r["instance_id"]: r for r in all_rows(run) if r.get("status") == "ok" and r.get("metrics")}


def bad(message):
    """Bad input: the message on stderr, exit status 2."""
    print(message, file=sys.stderr)
    sys.exit(2)
