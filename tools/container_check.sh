#!/usr/bin/env bash
# Device check for the container process mapping, for a lent GPU machine (root, repository
# root; writes under $OUT; about 90 s). A real CUDA job runs inside a PID namespace of its own
# (`unshare --pid --fork --mount-proc`), as a rented container's does, and the sampler is run
# next to it there and outside it:
#   inside-check.json   where = container; the job matched to its NVML entry by its device file
#   outside-check.json  where = host; NVML's PID is the job's, mapping exact
#   holder.txt          the job's /dev/nvidia* fds and its device mappings in /proc/PID/maps
#                       (does a context map only its GPU's file?)
#   inside-kill.json    a tree kill of the job from inside with --watch: the memory NVML shows
#                       released, on a real driver
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/devout}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
S="python3 -m gpufleet_sampler"
export PYTHONPATH=remote
# The namespace: PID 1 is a shell that starts the job, waits until it holds memory, runs the
# sampler, kills the job's tree, and reports.
unshare --pid --fork --mount-proc bash -c "
  python3 tools/gpu_load.py --seconds 80 --busy 5 --idle 5 --hold-gib 4 >'$OUT/load.log' 2>&1 &
  JOB=\$!
  sleep 25
  $S check --backend nvml >'$OUT/inside-check.json' 2>'$OUT/inside-check.err'
  { ls -l /proc/\$JOB/fd | grep nvidia; grep nvidia /proc/\$JOB/maps | awk '{print \$2, \$6}' | sort | uniq -c; } >'$OUT/holder.txt' 2>&1
  cat /proc/\$JOB/stat >'$OUT/job-stat.txt'
  T=\$(awk '{print \$22}' /proc/\$JOB/stat)
  sleep 5
  $S kill --pid \$JOB --start-time \$T --tree --watch 30 >'$OUT/inside-kill.json' 2>&1
  wait
" &
NS=$!
sleep 30
# Outside, while the job runs: the host's view of the same process.
$S check --backend nvml >"$OUT/outside-check.json" 2>"$OUT/outside-check.err"
wait $NS
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
for name in ("inside-check.json", "outside-check.json", "inside-kill.json"):
    try:
        obj = json.load(open(os.path.join(out, name)))
    except (OSError, ValueError) as e:
        print(name, "unreadable:", e)
        continue
    if "host" in obj:
        h = obj["host"]
        print(name, h.get("where"), h.get("nvml_pids"), h.get("where_evidence"))
        for g in obj.get("gpus", []):
            for p in g.get("process_list", []):
                print("  gpu", g["index"], {k: p.get(k) for k in ("pid", "host_pid", "mapping", "name", "mem_bytes", "holds_device", "orphan")})
    else:
        print(name, obj.get("result"), obj.get("message"), (obj.get("memory") or {}).get("message"))
PY
cat "$OUT/holder.txt"
