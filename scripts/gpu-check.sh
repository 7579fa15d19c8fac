#!/usr/bin/env bash
# Every torch paper at smoke scale on CUDA and on the CPU: wall time of each, and whether the
# verdicts (claims.json, per claim id) agree between the two devices.
#
#   scripts/gpu-check.sh [OUT_DIR] [slug ...]      (default OUT_DIR: gpu-check, all torch papers)
#
# Exits 2 when CUDA is not available, 1 when a run fails or a verdict differs, 0 otherwise.
# Smoke verdicts are a plumbing check: a flip between devices at smoke is worth a look, not
# proof of a defect (GPU kernels round differently; dropout masks come from the GPU generator).
set -u
cd "$(dirname "$0")/.."
PY=.venv/bin/python
OUT=${1:-gpu-check}
shift $(( $# > 0 ? 1 : 0 ))
PAPERS=("$@")
if [ ${#PAPERS[@]} -eq 0 ]; then
  PAPERS=(castle clasp cofrgenets cyber-reward-sparsity muloco sad-flower
          rl-vs-sft-forgetting sim2real-safe-metarl smac telescope-perplexity vdw-gnn)
fi

if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null
then
  echo "gpu-check: CUDA is not available here (torch.cuda.is_available() is False); nothing run" >&2
  exit 2
fi
"$PY" -c 'import torch; print("gpu-check:", torch.cuda.get_device_name(0), "torch", torch.__version__)'

mkdir -p "$OUT"
status=0
printf '%-24s %10s %10s  %s\n' paper cuda_s cpu_s verdicts
for slug in "${PAPERS[@]}"; do
  failed=""
  times=()
  for dev in cuda cpu; do
    dir="$OUT/$dev/$slug"
    rm -rf "$dir"
    start=$(date +%s%N)
    if ! "$PY" -m icml26 run "$slug" --scale smoke --device "$dev" --out "$dir" \
        > "$OUT/$slug.$dev.log" 2>&1; then
      failed+=" $dev"
    fi
    times+=("$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')")
  done
  if [ -n "$failed" ]; then
    verdict="RUN FAILED on${failed} (see $OUT/$slug.<device>.log)"
    status=1
  else
    verdict=$("$PY" - "$OUT/cuda/$slug/$slug/claims.json" "$OUT/cpu/$slug/$slug/claims.json" <<'EOF'
import json
import sys

a, b = ({c["id"]: c["verdict"] for c in json.load(open(p))["claims"]} for p in sys.argv[1:3])
diff = [f"{k}: cuda {a.get(k)} / cpu {b.get(k)}" for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)]
print(f"agree ({len(a)} claims)" if not diff else "DIFFER: " + "; ".join(diff))
EOF
)
    [[ $verdict == agree* ]] || status=1
  fi
  printf '%-24s %10s %10s  %s\n' "$slug" "${times[0]}" "${times[1]}" "$verdict"
done
exit $status
