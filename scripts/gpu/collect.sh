#!/usr/bin/env bash
# On the GPU machine: what comes back ($OUT, one archive): logs, summaries, adapters, layers.
source "$(dirname "$0")/env.sh"
cd "$W" && tar czf "$OUT/results.tar.gz" --exclude='*/checkpoint' --exclude='*/model.safetensors' \
  res bench 2>/dev/null
ls -la "$OUT"
