#!/usr/bin/env bash
# The arrival benchmark on a lent GPU machine, the real thing (PyTorch where the image has
# it, else libcuda through ctypes), about 2 minutes, everything under $OUT (copy it to
# docs/device/ afterwards as bench-<gpu>-*.{jsonl,json,txt}):
#   bench-torch.jsonl   `gpufleet_sampler bench` with PyTorch (engine auto), 60 s
#   bench-cuda.jsonl    the same with --engine cuda (what an image without PyTorch measures)
#   bench-cancel.txt    a run cancelled by closing its stdin: what was left running after it
#   judged.json         the laptop's judgment of the torch run (when the app is importable)
#   nvidia-smi-q.txt    the card, for the record
# Tried through the stand-in: BENCH_STANDIN=1 with GPUFLEET_FAKE_TORCH / GPUFLEET_FAKE_NVML
# and tests/fakes first on PYTHONPATH (tests/support/bench_standin.py writes both profiles).
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/devout}
SECONDS_RUN=${BENCH_SECONDS:-60}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}remote"
nvidia-smi -q >"$OUT/nvidia-smi-q.txt" 2>&1 || echo "no nvidia-smi" >"$OUT/nvidia-smi-q.txt"
echo "== bench (auto engine)"
timeout $((SECONDS_RUN + 90)) python3 -m gpufleet_sampler bench --seconds "$SECONDS_RUN" \
    >"$OUT/bench-torch.jsonl" 2>"$OUT/bench-torch.err"; echo "rc=$?"
echo "== bench (libcuda engine)"
timeout $((SECONDS_RUN / 2 + 90)) python3 -m gpufleet_sampler bench --engine cuda \
    --seconds $((SECONDS_RUN / 2)) >"$OUT/bench-cuda.jsonl" 2>"$OUT/bench-cuda.err"; echo "rc=$?"
echo "== cancel"
python3 - "$OUT/bench-cancel.txt" <<'PY'
import json, os, subprocess, sys, time
p = subprocess.Popen([sys.executable, "-m", "gpufleet_sampler", "bench", "--seconds", "60",
                      "--cancel-on-eof"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
pid = None
for line in p.stdout:
    if line.strip() and json.loads(line).get("kind") == "bench_start":
        pid = json.loads(line)["pid"]
        break
time.sleep(8)
p.stdin.close()
rest = p.stdout.read().decode()
rc = p.wait(timeout=60)
time.sleep(1)
left = os.path.exists("/proc/%s" % pid) if pid else None
with open(sys.argv[1], "w") as f:
    f.write("rc=%s worker=%s left_running=%s\n%s" % (rc, pid, left, rest))
PY
echo "rc=$?"
if python3 -c "import gpufleet" 2>/dev/null || [ -d gui ]; then
    PYTHONPATH="gui:$PYTHONPATH" python3 - "$OUT/bench-torch.jsonl" >"$OUT/judged.json" 2>&1 <<'PY' || true
import json, sys
from gpufleet.core.verdicts.arrival import collect, judge
print(json.dumps(judge("device", collect(open(sys.argv[1], "rb"))), indent=2))
PY
fi
ls -l "$OUT"
