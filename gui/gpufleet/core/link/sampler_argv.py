"""The argv of each sampler subcommand for a host: one place that knows the sampler's CLI
(remote/gpufleet_sampler/__main__.py), so sessions, the fleet and deploy agree on it."""

from __future__ import annotations

import json

from gpufleet_sampler import protocol

from gpufleet.core.config.hostconfig import HostConfig


def backend_args(host: HostConfig) -> list[str]:
    """``--backend`` and friends: they also key the daemon's lock, so every command that talks
    to the daemon must pass the same ones."""
    args = [
        "--backend",
        host.backend,
        "--seed",
        str(host.seed),
        "--interval",
        f"{host.interval_s:g}",
    ]
    if host.scenario:
        args += ["--scenario", host.scenario]
    if host.sampler_cpu_pct is not None:
        args += ["--cpu-budget", f"{host.sampler_cpu_pct:g}"]
    return args


def _state(state_dir: str | None) -> list[str]:
    return ["--state-dir", state_dir] if state_dir else []


def attach_argv(
    prefix: list[str],
    host: HostConfig,
    from_seq: int,
    state_dir: str | None = None,
    run_id: str | None = None,
    watch_links_s: float = 0.0,
) -> list[str]:
    """``attach --from-seq N``; with the run id of the hello that N was counted under, so
    the daemon can tell a client of its own run from one of an earlier run, and the seconds
    someone still looks at the per-link NVLink values (``--watch-links``)."""
    run = ["--run-id", run_id] if run_id else []
    watch = ["--watch-links", f"{watch_links_s:.0f}"] if watch_links_s >= 1.0 else []
    return [
        *prefix,
        "attach",
        *backend_args(host),
        *_state(state_dir),
        "--from-seq",
        str(from_seq),
        *run,
        *watch,
        "--start",
    ]


def watch_links_line(seconds: float) -> bytes:
    """The request line an attached client writes on ``attach``'s stdin: read the per-link
    NVLink values at their full rate for ``seconds`` more."""
    return json.dumps({"op": protocol.WATCH_LINKS_KEY, "seconds": round(seconds, 1)}).encode()


def stop_argv(prefix: list[str], host: HostConfig, state_dir: str | None = None) -> list[str]:
    return [*prefix, "stop", *backend_args(host), *_state(state_dir)]


def check_argv(prefix: list[str], host: HostConfig, state_dir: str | None = None) -> list[str]:
    return [*prefix, "check", *backend_args(host), *_state(state_dir)]


def kill_argv(
    prefix: list[str],
    pid: int,
    start_ticks: int,
    signal: str,
    grace_s: float,
    sudo: bool,
    tree: bool = False,
    watch_s: float = 0.0,
) -> list[str]:
    """``pid`` is the PID in the sampler's own namespace (in a container, not NVML's)."""
    argv = [
        *prefix,
        "kill",
        "--pid",
        str(pid),
        "--start-time",
        str(start_ticks),
        "--signal",
        signal,
        "--grace",
        f"{grace_s:g}",
    ]
    if tree:
        argv.append("--tree")
    if watch_s > 0:
        argv += ["--watch", f"{watch_s:g}"]
    return [*argv, "--sudo"] if sudo else argv


def daemon_argv(prefix: list[str], host: HostConfig, state_dir: str | None = None) -> list[str]:
    """Start (or find) the daemon; it prints its status and exits 0 either way."""
    return [*prefix, "daemon", *backend_args(host), *_state(state_dir)]


def watchdog_argv(
    prefix: list[str],
    host: HostConfig,
    cmd: str,
    options: list[str] | None = None,
    state_dir: str | None = None,
) -> list[str]:
    """``watchdog arm|disarm|status|cancel`` with the arm options (``--action`` …)."""
    return [*prefix, "watchdog", *backend_args(host), *_state(state_dir), cmd, *(options or [])]


def bench_argv(
    prefix: list[str],
    host: HostConfig,
    gpus: list[int] | None = None,
    seconds: float = 60.0,
    force: bool = False,
) -> list[str]:
    """``bench``: streams JSON lines; the end of its stdin (the laptop left) cancels it."""
    argv = [*prefix, "bench", *backend_args(host), "--seconds", f"{seconds:g}", "--cancel-on-eof"]
    if gpus:
        argv += ["--gpus", ",".join(str(g) for g in gpus)]
    return [*argv, "--force"] if force else argv
