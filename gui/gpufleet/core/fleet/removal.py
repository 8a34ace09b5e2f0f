"""Removing a host from gpufleet, the same from the CLI (``gpufleet hosts remove``) and the
window (Hosts ▸ Remove selected host…): out of config.toml, its stored secrets out of the
keyring, its host key forgotten unless another host reaches the same address. Its history
is another matter, asked separately (kept by default: ``gpufleet export`` still reads it)."""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.core.config import configfile, secrets
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link import hostkeys


@dataclass(frozen=True)
class Removed:
    host: HostConfig
    secrets_deleted: tuple[str, ...]
    secrets_note: str | None  # why stored secrets could not be deleted, when they could not


class NoSuchHost(LookupError):
    """The config names no such host; the message lists those it has."""


def remove_host(name: str) -> Removed:
    """Remove ``name`` from config.toml and what gpufleet kept for it (blocking). Raises
    NoSuchHost, or ConfigError when the file cannot be read or written."""
    cfg = configfile.load_config()
    host = cfg.host(name)
    if host is None:
        known = ", ".join(h.name for h in cfg.hosts) or "none"
        raise NoSuchHost(f"no host named {name!r} (hosts: {known})")
    cfg.hosts = [h for h in cfg.hosts if h.name != name]
    configfile.save_config(cfg)
    deleted: list[str] = []
    note = None
    try:
        deleted = secrets.delete_all(name)
    except secrets.SecretStoreUnavailable as e:
        if e.reason != "no_keyring":  # with no keyring at all, nothing can be stored
            note = str(e)
    if not any((h.host, h.port) == (host.host, host.port) for h in cfg.hosts):
        hostkeys.KnownHosts().forget(hostkeys.host_key_name(host.host, host.port))
    return Removed(host, tuple(deleted), note)
