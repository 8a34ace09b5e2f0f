"""A PID namespace of its own with its own /proc, as a rented container has, made with
``unshare --pid --fork --mount-proc`` (root only). Processes are started in it through
``nsenter``; the test, outside, sees them under the outer PIDs, which is what NVML reports
from a container (it numbers processes as the host's namespace does).

PID 1 inside is a small reaper (a container's init), so that processes whose parent dies are
handed to it and reaped, as under tini or dumb-init."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REAPER = (
    "import os, time\n"
    "while True:\n"
    "    try:\n"
    "        os.wait()\n"
    "    except ChildProcessError:\n"
    "        time.sleep(0.1)\n"
)
HOLDER = Path(__file__).resolve().parent / "gpu_holder_proc.py"


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


class PidNamespace:
    def __init__(self) -> None:
        self.unshare = subprocess.Popen(
            [
                "unshare",
                "--pid",
                "--fork",
                "--mount-proc",
                "--kill-child",
                sys.executable,
                "-c",
                REAPER,
            ],
            stdin=subprocess.DEVNULL,
        )
        self.spawned: list[subprocess.Popen[str]] = []
        deadline = time.monotonic() + 30
        kids: list[int] = []
        while time.monotonic() < deadline:
            kids = _children(self.unshare.pid)
            if kids:
                break
            time.sleep(0.02)
        assert kids, "unshare started no namespace init"
        # The namespace's PID 1 as the outside numbers it.
        self.init = kids[0]
        self.ns = os.readlink(f"/proc/{self.init}/ns/pid")
        # Wait until the init runs Python (not unshare between fork and exec).
        while time.monotonic() < deadline:
            if self.inner_pid(self.init) == 1 and self._comm(self.init).startswith("python"):
                break
            time.sleep(0.02)

    @staticmethod
    def _comm(pid: int) -> str:
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            return ""

    def enter(self) -> list[str]:
        """The command prefix that runs a program inside (its PID namespace and /proc)."""
        return ["nsenter", "--target", str(self.init), "--pid", "--mount", "--"]

    def run(
        self, argv: list[str], env: dict[str, str] | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.enter() + argv,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def holder(self, dev: Path, *args: str) -> dict[str, Any]:
        """Start a gpu_holder_proc inside; its inner PIDs, outer PIDs and start order."""
        p = subprocess.Popen(
            [*self.enter(), sys.executable, str(HOLDER), str(dev), *args],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        self.spawned.append(p)
        assert p.stdout is not None
        line = p.stdout.readline()
        assert line, "the holder process did not start"
        info: dict[str, Any] = json.loads(line)
        info["outer"] = self.outer_pid(info["pid"])
        info["outer_workers"] = [self.outer_pid(w) for w in info["workers"]]
        return info

    def inner_pid(self, outer: int) -> int | None:
        try:
            status = Path(f"/proc/{outer}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
        return None

    def outer_pid(self, inner: int) -> int:
        """The outside's PID of the process numbered ``inner`` inside."""
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                if os.readlink(f"/proc/{name}/ns/pid") != self.ns:
                    continue
                status = Path(f"/proc/{name}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("NSpid:") and int(line.split()[-1]) == inner:
                    return int(name)
        raise LookupError(f"no process {inner} in the namespace")

    def alive(self, outer: int) -> bool:
        try:
            state = Path(f"/proc/{outer}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state not in ("Z", "X")

    def close(self) -> None:
        # PID 1 of a namespace ending takes every process in it along.
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.init, signal.SIGKILL)
        if self.unshare.poll() is None:
            self.unshare.kill()
        self.unshare.wait(timeout=30)
        for p in self.spawned:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=30)
