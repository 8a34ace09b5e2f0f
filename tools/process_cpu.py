"""Run a command to its end and print, as JSON, what it cost as a whole process: CPU % of
one core over its wall time, peak RSS, its exit status and the tail of its stderr.

A device-check helper: ``python3 tools/process_cpu.py STDOUT_FILE -- COMMAND...`` (its
stdout goes to STDOUT_FILE). Stdlib only.
"""

import json
import resource
import subprocess
import sys
import time


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print("usage: process_cpu.py STDOUT_FILE -- COMMAND...", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    with open(sys.argv[1], "wb") as out:
        p = subprocess.Popen(sys.argv[3:], stdout=out, stderr=subprocess.PIPE)
        rss = 0
        while p.poll() is None:
            try:
                with open(f"/proc/{p.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            rss = max(rss, int(line.split()[1]))
            except OSError:
                pass
            time.sleep(0.5)
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru.ru_utime + ru.ru_stime
    print(
        json.dumps(
            {
                "rc": p.returncode,
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 3),
                "cpu_pct": round(100 * cpu / wall, 2),
                "peak_rss_mib": round(rss / 1024, 1),
                "stderr": err[-2000:],
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
