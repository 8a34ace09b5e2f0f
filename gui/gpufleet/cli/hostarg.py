"""What every CLI command that takes a HOST shares: finding the host (a configured name or a
``demo:<name>`` / ``demo:<scenario>`` demo host), asking about unknown host keys, and mapping
a failure kind to an exit code."""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable

from gpufleet.cli.errors import (
    EXIT_CONNECT,
    EXIT_FAILURE,
    EXIT_HOSTKEY,
    EXIT_NOT_FOUND,
    CliError,
)
from gpufleet.core.config import paths
from gpufleet.core.config.configfile import ConfigError, load_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.demo import DEMO_PREFIX, demo_host, demo_hosts
from gpufleet.core.history.store import Store, StoreError

_prompt_lock = threading.Lock()


def resolve_host(name: str) -> HostConfig:
    """The host called ``name``; CliError (exit 8) with the names there are, if none."""
    if name.startswith(DEMO_PREFIX):
        h = demo_host(name)
        if h is None:
            names = ", ".join(f"{DEMO_PREFIX}{d.name}" for d in demo_hosts())
            raise CliError(f"no demo host {name!r}; there are: {names}", EXIT_NOT_FOUND)
        return h
    hosts = configured_hosts()
    for h in hosts:
        if h.name == name:
            return h
    known = ", ".join(h.name for h in hosts) or "none configured"
    if demo_host(DEMO_PREFIX + name) is not None:
        # The demo fleet's names without their prefix (what the app's window shows).
        raise CliError(
            f"no host named {name!r} (hosts: {known}); the demo fleet has one: {DEMO_PREFIX}{name}",
            EXIT_NOT_FOUND,
        )
    raise CliError(
        f"no host named {name!r} (hosts: {known}; add one with `gpufleet hosts add`, or use "
        f"a demo host such as {DEMO_PREFIX}{demo_hosts()[0].name})",
        EXIT_NOT_FOUND,
    )


def history_host(name: str, demo: bool) -> tuple[str, bool, HostConfig | None]:
    """Which history a HOST argument of ``diagnose`` / ``export`` reads: ``demo:<name>`` (or
    ``demo:<scenario>``) is that demo host in the demo's own store, whatever ``--demo``
    says; any other name is read as given. → (name in the store, demo store?, the demo
    host's config or None)."""
    if not name.startswith(DEMO_PREFIX):
        return name, demo, None
    h = resolve_host(name)
    return h.name, True, h


_DEMO_RECORDS = (
    "the demo's history is recorded while the demo window (gpufleet --demo) or "
    "`gpufleet serve --demo` runs: open it once"
)


def no_demo_history_hint(demo: bool) -> str:
    """What to do when the demo's store lacks a demo host: the demo window records it."""
    return f"; {_DEMO_RECORDS}" if demo else ""


def open_history(demo: bool, otherwise: str) -> Store:
    """The history store (the demo's own for ``demo``), read-only; CliError (exit 8) when
    there is none yet, with what to do: run the demo, or ``otherwise``."""
    try:
        return Store(paths.history_file(demo=demo), read_only=True)
    except StoreError as e:
        hint = _DEMO_RECORDS if demo else otherwise
        raise CliError(f"{e} (nothing recorded yet? {hint})", EXIT_NOT_FOUND) from None


def add_live_host_args(p: argparse.ArgumentParser, host: bool = True) -> None:
    """HOST and ``--accept-new``, as every command that connects to a host takes them."""
    if host:
        p.add_argument(
            "host", metavar="HOST", help="a configured host (gpufleet hosts list) or demo:NAME"
        )
    p.add_argument(
        "--accept-new",
        action="store_true",
        help="trust a host key that is not known yet (the first connection)",
    )


def configured_hosts() -> list[HostConfig]:
    try:
        return list(load_config().hosts)
    except ConfigError as e:
        raise CliError(str(e), EXIT_FAILURE) from None


def unknown_key_callback(accept_new: bool) -> Callable[[str, str, str], bool]:
    """Decides about a host key not on file: yes with ``--accept-new``; otherwise asks on a
    terminal, and refuses when there is none to ask on."""

    def decide(label: str, key_type: str, fingerprint: str) -> bool:
        if accept_new:
            print(
                f"gpufleet: trusting the new host key of {label} ({key_type} {fingerprint})",
                file=sys.stderr,
            )
            return True
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return False
        with _prompt_lock:  # sessions run in threads: one question at a time
            sys.stderr.write(
                f"The host key of {label} is not known.\n"
                f"Trust {label} key {key_type} {fingerprint}? [y/N] "
            )
            sys.stderr.flush()
            answer = sys.stdin.readline().strip().lower()
        return answer in ("y", "yes")

    return decide


def exit_code_for(kind: str | None) -> int:
    if kind in ("hostkey_unknown", "hostkey_changed"):
        return EXIT_HOSTKEY
    if kind in ("connect", "refused", "auth", "timeout", "channel", "config"):
        return EXIT_CONNECT
    if kind in ("unknown_host", "no_process"):
        return EXIT_NOT_FOUND
    return EXIT_FAILURE


def hostkey_hint(kind: str | None, accept_new_flag: bool = True) -> str:
    """What to do about a refused host key, appended to the error line."""
    if kind == "hostkey_unknown" and accept_new_flag:
        return " (run it on a terminal to be asked, or pass --accept-new to trust it)"
    return ""
