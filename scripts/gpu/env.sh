# Sourced on the GPU machine: the CUDA 13 libraries PyTorch's wheels installed, and timing.
export LD_LIBRARY_PATH=$(dirname "$(find / -name libcublas.so.13 2>/dev/null | head -1)"):$(dirname "$(find / -name libcurand.so.10 2>/dev/null | head -1)"):$(dirname "$(find / -name libnvrtc.so.13 2>/dev/null | head -1)")
W=${W:-/tmp/w}
T="python3 $(pwd)/scripts/gpu/timed.py"
B="$W/coret-tui --model $W/all-MiniLM-L6-v2 --device cuda --batch-size 256"
# A .py checkout of one base commit from a slim pack (for --bench embed).
checkout() { # PACK SHA DIR
  mkdir -p "$3"
  git --git-dir "$1" ls-tree -r -z --name-only "$2" | while IFS= read -r -d '' f; do
    case "$f" in *.py) mkdir -p "$3/$(dirname "$f")"; git --git-dir "$1" cat-file blob "$2:$f" > "$3/$f" ;; esac
  done
}
