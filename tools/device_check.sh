#!/usr/bin/env bash
# The one device check for a lent GPU machine (see the tool's README): it records a real NVML
# trace for tests/fixtures/nvml/, measures the sampler's CPU and memory on real NVML, runs the
# deployed zipapp's `stream` and `check` on it, and probes NVLink link by link. Runs as root on
# the device machine from the repository root; writes everything under $OUT. About 3 minutes.
# The next run for the NVML bill (field bisection, threads, GPM/MIG, 150 s of the sampler):
# tools/device_round.sh.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/devout}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
nvidia-smi -q >"$OUT/nvidia-smi-q.txt" 2>&1
python3 -c 'import sys, pynvml; print(sys.version); print(pynvml.__file__)'
python3 tools/gpu_load.py --seconds 200 --busy 20 --idle 10 >"$OUT/load.log" 2>&1 &
LOAD=$!
sleep 8
echo "== record (60 s measure + 60 s record)"
PYTHONPATH=remote timeout 170 python3 tools/record_nvml_trace.py --seconds 60 --interval 1 \
    --out "$OUT/h200x1.json" 2>&1 | tail -20
echo "== zipapp stream 20 s"
Z=$(ls .dev/gpufleet-sampler-*.pyz | head -1)
python3 tools/process_cpu.py "$OUT/stream.jsonl" -- python3 "$Z" stream --count 20 --interval 1
echo "== zipapp check / info"
timeout 60 python3 "$Z" check >"$OUT/check.json" 2>"$OUT/check.err"; echo "check rc=$?"
timeout 60 python3 "$Z" info >"$OUT/info.json" 2>>"$OUT/check.err"; echo "info rc=$?"
echo "== nvlink probe"
timeout 60 python3 tools/nvlink_probe.py >"$OUT/nvlink.json" 2>&1; echo "probe rc=$?"
kill $LOAD 2>/dev/null; wait $LOAD 2>/dev/null
tail -3 "$OUT/load.log"
ls -la "$OUT"
