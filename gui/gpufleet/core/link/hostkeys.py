"""Known host keys: the app's own ``known_hosts`` (under the config dir) plus the user's
``~/.ssh/known_hosts``, read-only.

Why not paramiko's ``HostKeys``: its ``load()`` raises ``InvalidHostKey`` on the first
``@cert-authority``/``@revoked`` line (so one such line in ``~/.ssh/known_hosts`` would hide
every key), and ``save_host_keys`` rewrites the whole file, dropping comments. Here each line
is parsed on its own (bad lines are skipped), a new key is appended with ``O_APPEND`` and
fsync'ed, and the system file is never written.
"""

from __future__ import annotations

import binascii
import hmac
import logging
import os
import tempfile
from base64 import b64decode
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path
from typing import Literal

import paramiko
from paramiko.hostkeys import HostKeyEntry, InvalidHostKey

from gpufleet.core.config import paths

log = logging.getLogger(__name__)

Verdict = Literal["known", "unknown", "changed"]


def app_known_hosts() -> Path:
    """The known_hosts file gpufleet owns and appends to."""
    return paths.config_dir() / "known_hosts"


def system_known_hosts() -> Path:
    return Path.home() / ".ssh" / "known_hosts"


def host_key_name(host: str, port: int) -> str:
    """The name OpenSSH stores a key under: ``host`` on port 22, else ``[host]:port``."""
    return host if port == 22 else f"[{host}]:{port}"


def fingerprint(key: paramiko.PKey) -> str:
    """``SHA256:…``, the same string ``ssh-keygen -l`` prints."""
    return str(key.fingerprint)


def _name_matches(pattern: str, name: str) -> bool:
    if pattern.startswith("|1|"):
        # Hashed entry: |1|base64(salt)|base64(hmac-sha1(salt, name)).
        parts = pattern.split("|")
        if len(parts) != 4:
            return False
        try:
            salt = b64decode(parts[2])
            expected = b64decode(parts[3])
        except (binascii.Error, ValueError):
            return False
        return hmac.compare_digest(hmac.new(salt, name.encode(), sha1).digest(), expected)
    return pattern == name


def _read_entries(path: Path) -> list[HostKeyEntry]:
    """Every usable entry of one known_hosts file; bad or unsupported lines are skipped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as e:
        log.warning("cannot read %s: %s", path, e)
        return []
    entries: list[HostKeyEntry] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        # Markers (@cert-authority, @revoked) and patterns (*, ?, !) are OpenSSH features that
        # paramiko cannot use; skipping them is safe because an unmatched host is "unknown",
        # never silently trusted.
        if not line or line.startswith(("#", "@")):
            continue
        try:
            entry = HostKeyEntry.from_line(line, lineno)
        except (InvalidHostKey, paramiko.SSHException, ValueError, TypeError, IndexError) as e:
            log.debug("%s:%d: skipping unusable known_hosts line (%s)", path, lineno, type(e))
            continue
        if entry is not None:
            entries.append(entry)
    return entries


@dataclass(frozen=True)
class CheckResult:
    verdict: Verdict
    # For "changed": the key(s) on file for this name and key type.
    expected: tuple[paramiko.PKey, ...] = ()


class KnownHosts:
    """Host keys from the app file (read-write) and the system file (read-only)."""

    def __init__(self, app_file: Path | None = None, system_file: Path | None = None) -> None:
        self.app_file = app_file if app_file is not None else app_known_hosts()
        self.system_file = system_file if system_file is not None else system_known_hosts()

    def keys_for(self, name: str) -> list[paramiko.PKey]:
        """All keys on file for ``name`` (either file), re-read each time."""
        keys: list[paramiko.PKey] = []
        for path in (self.system_file, self.app_file):
            for entry in _read_entries(path):
                if any(_name_matches(p, name) for p in entry.hostnames):
                    keys.append(entry.key)
        return keys

    def known_types(self, name: str) -> list[str]:
        seen: list[str] = []
        for k in self.keys_for(name):
            if k.get_name() not in seen:
                seen.append(k.get_name())
        return seen

    def check(self, name: str, key: paramiko.PKey) -> CheckResult:
        """Known if any entry for this name has this exact key; changed if any key at all is
        on file for the name but not this one, whatever its type; unknown only when nothing
        is on file. Stricter than OpenSSH, which asks about a key of a type not yet on file:
        a server that suddenly offers only another type is what an attacker without the old
        private key would present, and asking would let ``--accept-new`` trust it."""
        on_file = self.keys_for(name)
        if any(k.asbytes() == key.asbytes() for k in on_file):
            return CheckResult("known")
        if on_file:
            return CheckResult("changed", tuple(on_file))
        return CheckResult("unknown")

    def add(self, name: str, key: paramiko.PKey) -> None:
        """Append one line to the app file (created 0600), durably."""
        paths.ensure_private_dir(self.app_file.parent)
        line = f"{name} {key.get_name()} {key.get_base64()}\n".encode()
        fd = os.open(self.app_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def forget(self, name: str) -> int:
        """Remove every app-file line for ``name`` (a recycled instance gets a new key).

        Returns how many lines were removed. The system file is not touched: a key there is
        the user's to edit (``ssh-keygen -R``).
        """
        try:
            lines = self.app_file.read_text(encoding="utf-8").splitlines(keepends=True)
        except FileNotFoundError:
            return 0
        kept: list[str] = []
        removed = 0
        for line in lines:
            fields = line.strip().split()
            if (
                fields
                and not fields[0].startswith(("#", "@"))
                and any(_name_matches(p, name) for p in fields[0].split(","))
            ):
                removed += 1
                continue
            kept.append(line)
        if removed:
            fd, tmp = tempfile.mkstemp(dir=self.app_file.parent, prefix=".known_hosts.")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.writelines(kept)
                    f.flush()
                    os.fsync(f.fileno())
                os.chmod(tmp, 0o600)
                os.replace(tmp, self.app_file)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        return removed
