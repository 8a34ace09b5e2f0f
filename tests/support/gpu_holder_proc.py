"""A stand-in GPU process for the container tests: it opens device files of a test-only
device directory (as a CUDA process opens /dev/nvidiaN and /dev/nvidiactl), optionally forks
workers that open their own, prints ``{"pid": P, "workers": [...]}`` (PIDs as its own PID
namespace numbers them) and waits until it is killed.

Usage: ``gpu_holder_proc.py DEV_DIR --hold 0,1 [--ctl] [--workers N --worker-hold 1]
[--session] [--name COMM] [--map 0]``. The device files must be at least a page long
to be mapped. ``--hold`` empty: a launcher that holds no device itself."""

from __future__ import annotations

import argparse
import json
import mmap
import os
import signal
import sys


def _open(dev: str, minors: str, ctl: bool) -> list[int]:
    fds = [os.open(os.path.join(dev, f"nvidia{m}"), os.O_RDWR) for m in minors.split(",") if m]
    if ctl:
        fds.append(os.open(os.path.join(dev, "nvidiactl"), os.O_RDWR))
    return fds


def _map(dev: str, minor: str) -> mmap.mmap:
    """Map one page of a device file, as a CUDA context maps its GPU's."""
    fd = os.open(os.path.join(dev, f"nvidia{minor}"), os.O_RDWR)
    return mmap.mmap(fd, 4096, mmap.MAP_SHARED)


def _rename(name: str) -> None:
    with open("/proc/self/comm", "w", encoding="ascii") as f:
        f.write(name[:15])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dev")
    ap.add_argument("--hold", default="")
    ap.add_argument("--ctl", action="store_true")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--worker-hold", default="")
    ap.add_argument("--session", action="store_true", help="lead a new session (a job)")
    ap.add_argument("--name", default=None, help="the comm to show (workers add -w)")
    ap.add_argument("--map", default="", help="minors whose device file to map (a context)")
    args = ap.parse_args()
    if args.name:
        _rename(args.name)
    maps = [_map(args.dev, m) for m in args.map.split(",") if m]
    if args.session:
        os.setsid()
    _open(args.dev, args.hold, args.ctl)
    workers = []
    for _ in range(args.workers):
        pid = os.fork()
        if pid == 0:
            if args.name:
                _rename(args.name + "-w")
            _open(args.dev, args.worker_hold, args.ctl)
            while True:
                signal.pause()
        workers.append(pid)
    sys.stdout.write(json.dumps({"pid": os.getpid(), "workers": workers, "maps": len(maps)}) + "\n")
    sys.stdout.flush()
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
