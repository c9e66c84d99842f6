#!/usr/bin/env bash
# On the GPU machine, call 1 and 2: unpack what the calls carried into $W (it stays while the
# machine is warm). Part files are appended in name order; the model's sha256 is checked.
set -euo pipefail
W=${W:-/tmp/w}
mkdir -p "$W/all-MiniLM-L6-v2" "$W/shards"
for d in .device/c*; do
  if [ -f "$d/coret-tui.xz" ]; then xz -dc "$d/coret-tui.xz" > "$W/coret-tui"; chmod +x "$W/coret-tui"; fi
  for f in "$d"/model.xz.* "$d"/*.shard "$d"/*.jsonl "$d"/*.sha256 "$d"/config.json "$d"/tokenizer.json; do
    if [ -f "$f" ]; then cp "$f" "$W/"; fi
  done
  for p in "$d"/pack-*; do if [ -d "$p" ]; then cp -r "$p" "$W/"; fi; done
done
cd "$W"
if [ ! -f all-MiniLM-L6-v2/model.safetensors ] && [ -f model.xz.01 ]; then
  cat model.xz.0* | xz -dc > all-MiniLM-L6-v2/model.safetensors
  (cd all-MiniLM-L6-v2 && sha256sum -c ../model.sha256)
  cp config.json tokenizer.json all-MiniLM-L6-v2/
fi
mv -f ./*.shard shards/ 2>/dev/null || true
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
ls -la "$W" "$W/all-MiniLM-L6-v2" "$W/shards"
