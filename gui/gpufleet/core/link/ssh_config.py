"""``~/.ssh/config`` lookups (HostName, Port, User, IdentityFile, ProxyJump) with ``Include``.

paramiko's ``SSHConfig`` ignores ``Include`` (it shows up as a literal ``include`` key and the
file is never read), so this module inlines included files itself before handing the text to
paramiko: globs are expanded in sorted order, relative paths are taken from ``~/.ssh`` (as
OpenSSH does for the user's file), and after an included file the enclosing ``Host``/``Match``
header is repeated so that the lines following the ``Include`` keep their block.
"""

from __future__ import annotations

import glob
import io
import logging
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import paramiko

from gpufleet.core.config.hostconfig import HostConfig

log = logging.getLogger(__name__)

_HEADER = re.compile(r"^\s*(host|match)(\s*=\s*|\s+)(.*)$", re.IGNORECASE)
_INCLUDE = re.compile(r"^\s*include(\s*=\s*|\s+)(.*)$", re.IGNORECASE)
_MAX_DEPTH = 16


class SshConfigError(Exception):
    """An ssh config file that cannot be used (message names the file)."""


def default_path() -> Path:
    return Path.home() / ".ssh" / "config"


@dataclass(frozen=True)
class SshTarget:
    """What ``~/.ssh/config`` says about one alias (None: not set there)."""

    alias: str
    hostname: str
    port: int | None
    user: str | None
    identity_files: tuple[str, ...]
    proxy_jump: str | None
    proxy_command: str | None = None

    def host_config(self) -> HostConfig:
        """A new gpufleet host named after the alias (what importing it adds)."""
        return HostConfig(
            name=self.alias,
            host=self.hostname,
            port=self.port or 22,
            user=self.user,
            key_path=self.identity_files[0] if self.identity_files else None,
            jump=self.proxy_jump,
        )


def _expand_includes(path: Path, base: Path, depth: int, out: list[str]) -> None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return
    except OSError as e:
        log.warning("cannot read ssh config %s: %s", path, e)
        return
    header: str | None = None
    for line in text.splitlines():
        if _HEADER.match(line):
            header = line.strip()
            out.append(line)
            continue
        m = _INCLUDE.match(line)
        if not m:
            out.append(line)
            continue
        if depth >= _MAX_DEPTH:
            raise SshConfigError(f"{path}: Include nested more than {_MAX_DEPTH} deep")
        try:
            args = shlex.split(m.group(2), comments=True)
        except ValueError as e:
            raise SshConfigError(f"{path}: bad Include line {line.strip()!r}: {e}") from None
        for arg in args:
            pattern = os.path.expanduser(arg)
            if not os.path.isabs(pattern):
                pattern = str(base / pattern)
            for match in sorted(glob.glob(pattern)):
                if os.path.isfile(match):
                    _expand_includes(Path(match), base, depth + 1, out)
        # Restore the block the Include sat in (or the global scope, before any header).
        out.append(header if header is not None else "Host *")


def expanded_text(path: Path | None = None) -> str:
    """The config with every Include inlined (empty when there is no config file)."""
    path = path if path is not None else default_path()
    out: list[str] = []
    _expand_includes(path, path.parent, 0, out)
    return "\n".join(out) + "\n"


def load(path: Path | None = None) -> paramiko.SSHConfig:
    cfg = paramiko.SSHConfig()
    text = expanded_text(path)
    try:
        cfg.parse(io.StringIO(text))
    except Exception as e:  # paramiko.ConfigParseError and friends
        raise SshConfigError(f"{path or default_path()}: {e}") from None
    return cfg


def lookup(
    alias: str, path: Path | None = None, cfg: paramiko.SSHConfig | None = None
) -> SshTarget:
    """Resolve ``alias`` the way ``ssh alias`` would (for the keys gpufleet uses)."""
    cfg = cfg if cfg is not None else load(path)
    try:
        d = cfg.lookup(alias)
    except Exception as e:
        raise SshConfigError(f"{path or default_path()}: cannot look up {alias!r}: {e}") from None
    port: int | None = None
    if "port" in d:
        try:
            port = int(d["port"])
        except ValueError:
            raise SshConfigError(
                f"{path or default_path()}: Port of {alias!r} is not a number: {d['port']!r}"
            ) from None
    jump = d.get("proxyjump")
    if jump is not None and str(jump).lower() == "none":
        jump = None
    raw_idents: str | list[str] = d.get("identityfile") or []
    idents = [raw_idents] if isinstance(raw_idents, str) else list(raw_idents)
    return SshTarget(
        alias=alias,
        hostname=str(d.get("hostname") or alias),
        port=port,
        user=str(d["user"]) if d.get("user") else None,
        identity_files=tuple(os.path.expanduser(str(p)) for p in idents),
        proxy_jump=str(jump) if jump else None,
        proxy_command=str(d["proxycommand"]) if d.get("proxycommand") else None,
    )


def importable_aliases(path: Path | None = None) -> list[str]:
    """Every concrete alias named by a ``Host`` line (no wildcards or negations), in order."""
    names: list[str] = []
    for line in expanded_text(path).splitlines():
        m = _HEADER.match(line)
        if not m or m.group(1).lower() != "host":
            continue
        try:
            patterns = shlex.split(m.group(3), comments=True)
        except ValueError:
            patterns = m.group(3).split()
        for p in patterns:
            if any(c in p for c in "*?!") or p in names:
                continue
            names.append(p)
    return names
