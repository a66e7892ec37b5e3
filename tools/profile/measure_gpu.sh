#!/usr/bin/env bash
# One prepared measurement session on a machine with one NVIDIA GPU and PyTorch (tools/profile/README.md,
# "Measuring a GPU for the compute model"). Everything it measures lands in OUT_DIR; nothing here needs
# trainsim, so the machine needs no build: the kernel lists come from `trainsim ops SCENARIO --json`,
# saved beforehand into OPS_DIR (one JSON per scenario).
#
#   tools/profile/measure_gpu.sh OPS_DIR OUT_DIR [SUSTAINED_SECONDS]
#
# Order: the cheap, most-wanted parts first, each under its own time limit, so a session cut short keeps
# what it measured.
set -u
ops=${1:?usage: measure_gpu.sh OPS_DIR OUT_DIR [SUSTAINED_SECONDS]}
out=${2:?usage: measure_gpu.sh OPS_DIR OUT_DIR [SUSTAINED_SECONDS]}
sustained=${3:-40}
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1
mkdir -p "$out/db"
nvidia-smi -q > "$out/nvidia-smi-q.txt" 2>&1
name=$(python3 -c "import torch; print(torch.cuda.get_device_name(0))")
# The catalog id of the part (the op database's gpu column must match data/gpus.yaml exactly).
case "$name" in
  *H100*PCIe*) id=H100-PCIe ;; *H100*) id=H100-SXM ;; *H200*) id=H200 ;; *H800*) id=H800-SXM ;;
  *A100*80GB*) id=A100-SXM-80GB ;; *A100*) id=A100-SXM-40GB ;; *B200*) id=B200 ;;
  *) id=$(echo "$name" | tr -c 'A-Za-z0-9\n-' '_') ;;
esac
echo "measure_gpu: $name -> gpu id $id"

timeout 120 python3 "$here/gpu_characterise.py" -o "$out/characterise-kernels.json" \
  --parts attention,fp8,memory,launch || echo "measure_gpu: kernel characterisation stopped (exit $?)"

timeout 180 bash -c '
  for f in "$1"/*.json; do
    python3 "$3/profile_ops.py" --ops-json "$f" -o "$2/db/$(basename "$f" .json).csv" --gpu-name "$4" \
      --warmup 3 --iters 10 2>&1 | grep -v "^  " || true
  done' _ "$ops" "$out" "$here" "$id" || echo "measure_gpu: op profiling stopped (exit $?)"
tar -C "$out" -czf "$out/db.tar.gz" db && rm -rf "$out/db"

timeout 110 python3 "$here/gpu_characterise.py" -o "$out/characterise-load.json" \
  --parts interference,sustained --sustained-s "$sustained" --smi-log "$out/smi-sustained.csv" \
  || echo "measure_gpu: load characterisation stopped (exit $?)"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv
echo "measure_gpu: done"
