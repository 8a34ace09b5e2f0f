"""Putting the sampler on a host: find python3 >= 3.8, upload the content-hashed zipapp to
``~/.cache/gpufleet/`` only when it is missing, retire older versions; and take it away again.

One probe (a single round trip) answers everything: the home directory, the best python3, and
whether this exact zipapp is there already. Every value that reaches the remote shell is
quoted, and the probe runs under ``/bin/sh`` whatever the login shell is.
"""

from __future__ import annotations

import shlex

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link import sampler_argv as samplercmd
from gpufleet.core.link.channel import Transport, TransportError, Uploader, last_line
from gpufleet.core.link.zipapp import sampler_zipapp_bytes

REMOTE_DIR = ".cache/gpufleet"
ZIPAPP_GLOB = "gpufleet-sampler-*.pyz"
PYTHON_CANDIDATES = (
    "python3",
    "python3.13",
    "python3.12",
    "python3.11",
    "python3.10",
    "python3.9",
    "python3.8",
)
MIN_PYTHON = (3, 8)

_PROBE = r"""
d="$HOME/{dir}"
echo "home=$HOME"
py=""
best=""
for c in {candidates}; do
  p=$(command -v "$c" 2>/dev/null) || continue
  v=$("$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
  [ -n "$best" ] || best="$p $v"
  if "$p" -c 'import sys; sys.exit(0 if sys.version_info >= {minv} else 1)' 2>/dev/null; then
    py="$p"; echo "version=$v"; break
  fi
done
echo "python=$py"
echo "seen=$best"
[ -n "$py" ] || exit 0
mkdir -p "$d" && chmod 700 "$d" || echo "mkdir=failed"
if test -f "$d/{name}"; then echo present=1; else echo present=0; fi
"""

_RETIRE = r"""
d="$HOME/{dir}"
for f in "$d"/{glob}; do
  [ -e "$f" ] || continue
  [ "$f" = "$d/{name}" ] && continue
  {stop}
  rm -f "$f"
done
"""


def _probe_facts(out: bytes) -> dict[str, str]:
    facts: dict[str, str] = {}
    for raw in out.decode("utf-8", "replace").splitlines():
        key, sep, value = raw.partition("=")
        if sep:
            facts[key.strip()] = value.strip()
    return facts


def _sh(script: str) -> list[str]:
    # /bin/sh by absolute path: the login shell may be anything (fish, a restricted PATH).
    return ["/bin/sh", "-c", script]


def deploy(transport: Uploader, host: HostConfig) -> list[str]:
    """Make sure this app's sampler is on the host; returns the argv prefix that runs it.

    ``transport`` is an SSH transport (or anything with ``run`` and ``upload``). Raises
    TransportError: ``kind="no_python"`` (not retryable) when the host has no python3 >= 3.8.
    """
    name, data = sampler_zipapp_bytes()
    run, upload, label = transport.run, transport.upload, transport.label
    script = _PROBE.format(
        dir=REMOTE_DIR,
        candidates=" ".join(shlex.quote(c) for c in PYTHON_CANDIDATES),
        minv=repr(MIN_PYTHON),
        name=shlex.quote(name),
    )
    rc, out, err = run(_sh(script), timeout=30.0)
    facts = _probe_facts(out)
    if rc != 0 or "home" not in facts:
        raise TransportError(
            f"{label}: cannot inspect the host (exit status {rc}): "
            f"{last_line(err) or last_line(out) or 'no output'}",
            kind="deploy",
        )
    python = facts.get("python", "")
    if not python:
        seen = facts.get("seen")
        found = f" (found {seen}, too old)" if seen else ""
        raise TransportError(
            f"python3 (>= 3.8) not found on {label}{found}: install it (apt-get install "
            "python3, or your distribution's package) and reconnect; the sampler needs "
            "nothing else",
            kind="no_python",
            retryable=False,
        )
    if facts.get("mkdir") == "failed":
        raise TransportError(
            f"{label}: cannot create ~/{REMOTE_DIR} on the host", kind="deploy", retryable=False
        )
    home = facts["home"].rstrip("/") or "/"
    remote_path = f"{home}/{REMOTE_DIR}/{name}"
    prefix = [python, remote_path]
    if facts.get("present") != "1":
        upload(data, remote_path, 0o755)
        # An app upgrade: stop the daemon the older sampler runs for this host and delete it.
        stop = " ".join(
            shlex.quote(a) for a in samplercmd.stop_argv([python, "__OLD__"], host)
        ).replace("__OLD__", '"$f"')
        retire = _RETIRE.format(
            dir=REMOTE_DIR,
            glob=ZIPAPP_GLOB,
            name=shlex.quote(name),
            stop=f"{stop} >/dev/null 2>&1 </dev/null",
        )
        run(_sh(retire), timeout=60.0)
    return prefix


def undeploy(transport: Transport, host: HostConfig, state_dir: str | None = None) -> None:
    """For a removed host: stop its sampler daemon and delete every uploaded sampler."""
    run = transport.run
    try:
        prefix = transport.ensure_sampler()
    except TransportError as e:
        if e.kind != "no_python":
            raise
        prefix = []
    if prefix:
        run(samplercmd.stop_argv(prefix, host, state_dir), timeout=60.0)
    if host.transport != "local":  # only remote hosts got uploads
        script = f'rm -f "$HOME/{REMOTE_DIR}"/{ZIPAPP_GLOB}'
        run(_sh(script), timeout=30.0)
