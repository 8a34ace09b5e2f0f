"""A child process that exec()s: ``sh`` waits for a line on stdin, then execs Python with a
secret-looking argument (which says ready and waits). Shared by the procfs and NVML process
cache tests, which check that a cached process is re-read after exec."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

PY_CODE = "import sys; print('ready', flush=True); sys.stdin.read()"
TOKEN = "s3cret"


@contextmanager
def shell_then_python() -> Iterator[subprocess.Popen[str]]:
    script = (
        f"read go; exec {shlex.quote(sys.executable)} -c {shlex.quote(PY_CODE)} --token={TOKEN}"
    )
    p = subprocess.Popen(
        ["sh", "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        yield p
    finally:
        p.kill()
        p.wait()
