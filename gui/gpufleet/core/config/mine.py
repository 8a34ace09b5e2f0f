""" "Mark as mine": a process the rules flagged as not the job's (``proc_suspect``) added by
name to its host's ``allowed_processes`` in config.toml, so that the rules leave it alone
there from the next process list on (the alert then resolves as any other does).

The names are the ones the condition matches literally (``[kworker/u16:3]`` included, whose
brackets a glob would read as a set): the process's comm and its command's program name. A
process of another container (``not_here``) has no name to match: it cannot be marked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from gpufleet.core.config.configfile import ConfigError, load_config, save_config
from gpufleet.core.config.hostconfig import HostConfig


def mine_names(evidence: Mapping[str, Any]) -> list[str]:
    """The names of the processes an alert's evidence lists, as the allow-list takes them."""
    values = evidence.get("values") or {}
    out: list[str] = []
    for p in values.get("processes") or ():
        if not isinstance(p, Mapping):
            continue
        name = p.get("name")
        if not name and p.get("cmd"):
            name = os.path.basename(str(p["cmd"]).split()[0])
        if name and str(name) not in out:
            out.append(str(name))
    return out


def mark_as_mine(host: str, names: Sequence[str], path: Path | None = None) -> HostConfig:
    """Add ``names`` to ``host``'s allow-list in the config file (written atomically) and
    return the host's new config. ``ConfigError`` when the file cannot be read or written,
    or does not hold the host (a demo host, a Prometheus group: nothing to write to)."""
    if not names:
        raise ConfigError("the alert names no process that can be marked (another container's)")
    cfg = load_config(path)
    old = cfg.host(host)
    if old is None:
        raise ConfigError(f"{host} is not a host of config.toml: its allow-list cannot be saved")
    allowed = [*old.allowed_processes, *(n for n in names if n not in old.allowed_processes)]
    new = replace(old, allowed_processes=tuple(allowed))
    cfg.hosts[cfg.hosts.index(old)] = new
    try:
        save_config(cfg, path)
    except OSError as e:
        raise ConfigError(f"config.toml could not be written: {e}") from None
    return new
