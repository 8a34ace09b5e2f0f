#!/usr/bin/env bash
# The NVML-bill device run for a lent GPU machine (see the device tool's README), about 4
# minutes, everything under $OUT (copy it to docs/device/ afterwards):
#   nvml-call-times.json   per-call costs under load, and the field bisection (which field of
#                          the per-tick field read costs the ~4 ms an H200 took)
#   nvml-threads.json      whether two threads' NVML calls overlap on this driver
#   gpm-mig.json           GPM support and streaming, MIG mode, per GPU
#   stream.jsonl           120 s of the sampler at 1 Hz on the real driver (hello's cpu_budget:
#                          the plan it made from its start-up timing)
#   stream-cpu.json        that run as a whole process (tools/process_cpu.py): CPU %, peak RSS
#   scaling.txt            bench/sampler.py --only scaling on this machine's cores (the cost
#                          model, not the GPU): does reading every GPU on the pool pay off with
#                          a core per reader?
# Runs as root from the repository root on the device machine. Stdlib + pynvml only.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=remote
OUT=${OUT:-/tmp/devout}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
nvidia-smi -q >"$OUT/nvidia-smi-q.txt" 2>&1
python3 tools/gpu_load.py --seconds 240 --busy 20 --idle 10 >"$OUT/load.log" 2>&1 &
LOAD=$!
sleep 8
echo "== call times + field bisection"
timeout 90 python3 tools/nvml_call_times.py --ticks 20 --bisect-fields >"$OUT/nvml-call-times.json" \
    2>"$OUT/nvml-call-times.err"; echo "rc=$?"
echo "== two threads"
timeout 60 python3 tools/nvml_threads.py --rounds 200 >"$OUT/nvml-threads.json" 2>&1; echo "rc=$?"
echo "== GPM / MIG"
timeout 30 python3 - >"$OUT/gpm-mig.json" 2>&1 <<'PY'
import json
import pynvml as N
N.nvmlInit()
out = {"driver": str(N.nvmlSystemGetDriverVersion()), "gpus": []}
for i in range(N.nvmlDeviceGetCount()):
    h = N.nvmlDeviceGetHandleByIndex(i)
    g = {"index": i, "name": str(N.nvmlDeviceGetName(h))}
    for key, fn in (
        ("gpm_supported", lambda: bool(N.nvmlGpmQueryDeviceSupport(h).isSupportedDevice)),
        ("gpm_streaming", lambda: int(N.nvmlGpmQueryIfStreamingEnabled(h))),
        ("mig_mode", lambda: list(N.nvmlDeviceGetMigMode(h))),
        ("mig_max_slices", lambda: int(N.nvmlDeviceGetMaxMigDeviceCount(h))),
    ):
        try:
            g[key] = fn()
        except Exception as e:  # NotSupported and friends: the answer is the error
            g[key] = "{}: {}".format(type(e).__name__, e)
    out["gpus"].append(g)
N.nvmlShutdown()
print(json.dumps(out, indent=1))
PY
echo "rc=$?"
echo "== the sampler, 120 s at 1 Hz"
python3 tools/process_cpu.py "$OUT/stream.jsonl" -- python3 -m gpufleet_sampler stream \
    --backend nvml --count 120 --interval 1 >"$OUT/stream-cpu.json"
cat "$OUT/stream-cpu.json"
kill $LOAD 2>/dev/null; wait $LOAD 2>/dev/null
echo "== the reader pool on $(nproc) cores, through the cost model"
timeout 150 python3 bench/sampler.py --only scaling --cost h200 --bill-minutes 6 >"$OUT/scaling.txt" 2>&1
tail -15 "$OUT/scaling.txt"
echo "== the arrival benchmark (tools/device_bench.sh)"
BENCH_SECONDS=${BENCH_SECONDS:-30} OUT="$OUT" bash tools/device_bench.sh
ls -la "$OUT"
