#!/usr/bin/env python3
"""Runs a command and prints its wall time and peak RSS to stderr (the GPU machines have no
GNU time):  python3 scripts/gpu/timed.py coret-tui --eval ..."""
import resource, subprocess, sys, time

t = time.time()
r = subprocess.run(sys.argv[1:])
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"TIMED rc={r.returncode} wall_s={time.time() - t:.1f} peak_rss_mib={ru.ru_maxrss / 1024:.0f} "
      f"cmd={' '.join(sys.argv[1:])}", file=sys.stderr, flush=True)
sys.exit(r.returncode)
