"""Parse the ``ssh …`` command line a provider shows, the way OpenSSH's own ``ssh`` reads it.

The forms the big providers print, all understood:

- vast.ai: ``ssh -p 20544 root@142.214.185.187 -L 8080:localhost:8080``
- RunPod (direct TCP): ``ssh root@213.173.108.12 -p 14561 -i ~/.ssh/id_ed25519``
- RunPod (proxy): ``ssh abc123-64411e2a@ssh.runpod.io -i ~/.ssh/id_ed25519``
- Lambda: ``ssh -i '/path/key.pem' ubuntu@203.0.113.7``
- AutoDL: ``ssh -p 52979 root@connect.westd.seetacloud.com``

As in ssh.c, options may come before and after the destination (ssh reads options, takes the
first word that is not one as the destination, then reads options again); the next word that
is not an option starts the remote command. The first value given wins (ssh keeps the first
``-p``, ``-l``, ``-o Port=…``, as its config files do). Understood: ``-p``, ``-i``, ``-J``,
``-l``, ``user@host``, ``ssh://user@host:port`` and ``-o`` Port/User/IdentityFile/ProxyJump/
HostName. Options of OpenSSH that do not change which machine is reached (``-L``, ``-N``,
``-v``, ``-o StrictHostKeyChecking=no``, a second ``-i``, a remote command) are listed in
``ParsedSsh.ignored`` so the caller can say so: nothing is dropped silently. A letter OpenSSH
does not have, ``-o ProxyCommand`` (which would change the route, and which we cannot follow)
and a bad value are a ``SshCommandError`` that names them.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Any

from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP, translated

# OpenSSH's option letters (ssh.c's getopt string): these take an argument...
_WITH_ARG = set("BbcDEeFIiJLlmOoPpQRSWw")
# ...and these do not.
_NO_ARG = set("1246AaCfGgKkMNnqsTtVvXxYy")
_HOST_RE = re.compile(r"^[A-Za-z0-9_.\-]+$|^[0-9A-Fa-f:.]+$")
# -o keys that decide whom we reach; the others are noted as ignored.
_TARGET_KEYS = ("port", "user", "identityfile", "proxyjump", "hostname")
# -o keys that would change the route in a way this app cannot follow: an error, not a note.
_REFUSED_KEYS = {
    "proxycommand": QT_TRANSLATE_NOOP(
        "SshCommand",
        "-o ProxyCommand is not supported: use -J (ProxyJump) or an alias of ~/.ssh/config",
    ),
}


class SshCommandError(ValueError):
    """A command line that is not a usable ssh command. ``str()`` is the English line;
    ``localized()`` the same in the installed language (the template is marked for
    translation, the values are filled in after)."""

    def __init__(self, template: str, **values: Any) -> None:
        super().__init__(template.format(**values))
        self.template = template
        self.values = values

    def localized(self) -> str:
        try:
            return translated("SshCommand", self.template).format(**self.values)
        except (KeyError, IndexError, ValueError):  # a bad translation: the English line
            return str(self)


def _e(template: str, **values: Any) -> SshCommandError:
    return SshCommandError(template, **values)


@dataclass(frozen=True)
class ParsedSsh:
    host: str
    port: int
    user: str | None
    key_path: str | None
    jump: str | None
    # What the command said that does not change which machine is reached, each as written
    # (``-L 8080:localhost:8080``, ``remote command 'nvidia-smi'``), for the caller to show.
    ignored: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "key_path": self.key_path,
            "jump": self.jump,
        }

    def ignored_note(self) -> str:
        """One line for the user, empty when nothing was ignored."""
        if not self.ignored:
            return ""
        return "ignored (does not change which machine is reached): " + ", ".join(self.ignored)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise _e(
            QT_TRANSLATE_NOOP("SshCommand", "bad port {text}: expected a number from 1 to 65535"),
            text=repr(text),
        )
    return port


def _split_destination(dest: str) -> tuple[str | None, str, int | None]:
    """``user@host``, ``host``, ``ssh://[user@]host[:port]`` → (user, host, port)."""
    port: int | None = None
    if dest.startswith("ssh://"):
        rest = dest[len("ssh://") :].rstrip("/")
        user, _, hostport = rest.rpartition("@")
        if hostport.startswith("["):
            end = hostport.find("]")
            if end < 0:
                raise _e(
                    QT_TRANSLATE_NOOP("SshCommand", "bad address in {dest}: unclosed '['"),
                    dest=repr(dest),
                )
            host, tail = hostport[1:end], hostport[end + 1 :]
            if tail:
                if not tail.startswith(":"):
                    raise _e(
                        QT_TRANSLATE_NOOP("SshCommand", "bad address in {dest}"), dest=repr(dest)
                    )
                port = _port(tail[1:])
        elif ":" in hostport:
            host, _, p = hostport.rpartition(":")
            port = _port(p)
        else:
            host = hostport
        return user or None, host, port
    user, _, host = dest.rpartition("@")
    return user or None, host, None


def _split(cmd: str) -> list[str]:
    text = cmd.strip()
    if not text:
        raise _e(
            QT_TRANSLATE_NOOP(
                "SshCommand", "empty command: paste an ssh command such as `ssh -p 2222 root@host`"
            )
        )
    try:
        argv = shlex.split(text)
    except ValueError as e:
        raise _e(
            QT_TRANSLATE_NOOP("SshCommand", "cannot split the command line ({error})"), error=str(e)
        ) from None
    if not argv or os.path.basename(argv[0]) != "ssh":
        raise _e(
            QT_TRANSLATE_NOOP(
                "SshCommand",
                "not an ssh command: it should start with `ssh` (got {got}); e.g. "
                "`ssh -p 2222 root@host`",
            ),
            got=repr(argv[0] if argv else ""),
        )
    return argv


class _Reader:
    """The options of one command line, in order; the first value of each kind wins."""

    def __init__(self) -> None:
        self.opts: dict[str, str] = {}
        self.ignored: list[str] = []
        self.dest: str | None = None
        self.dest_host = ""

    def set_first(self, key: str, value: str) -> None:
        self.opts.setdefault(key, value)

    def option(self, letter: str, value: str | None) -> None:
        if value is None:
            self.ignored.append(f"-{letter}")
        elif letter == "p":
            _port(value)  # a bad port is an error wherever it is
            self.set_first("port", value)
        elif letter == "i":
            if "identityfile" in self.opts:
                self.ignored.append(f"-i {value} (a second key: the first one is used)")
            self.set_first("identityfile", value)
        elif letter == "J":
            self.set_first("proxyjump", value)
        elif letter == "l":
            self.set_first("user", value)
        elif letter == "o":
            self._o(value)
        else:
            self.ignored.append(f"-{letter} {value}")

    def _o(self, value: str) -> None:
        m = re.match(r"^\s*([A-Za-z]+)\s*(?:=\s*|\s+)(.*?)\s*$", value)
        if not m:
            raise _e(
                QT_TRANSLATE_NOOP("SshCommand", "bad -o option {value}: expected Key=Value"),
                value=repr(value),
            )
        key, val = m.group(1).lower(), m.group(2)
        if key in _REFUSED_KEYS:
            raise _e(_REFUSED_KEYS[key])
        if key in _TARGET_KEYS:
            if key == "port":
                _port(val)
            self.set_first(key, val)
        else:
            self.ignored.append(f"-o {m.group(1)}={val}")

    def destination(self, dest: str) -> None:
        self.dest = dest
        user, host, port = _split_destination(dest)
        if user is not None:
            self.set_first("user", user)
        if port is not None:
            self.set_first("port", str(port))
        self.dest_host = host


def _read_options(argv: list[str], i: int, r: _Reader) -> int:
    """Options from ``argv[i]`` on, up to the first word that is not one; → its index."""
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return i + 1
        if not arg.startswith("-") or arg == "-":
            return i
        i += 1
        j = 1
        while j < len(arg):
            letter = arg[j]
            j += 1
            if letter in _NO_ARG:
                r.option(letter, None)
                continue
            if letter not in _WITH_ARG:
                raise _e(
                    QT_TRANSLATE_NOOP("SshCommand", "unknown ssh option -{letter} in {arg}"),
                    letter=letter,
                    arg=repr(arg),
                )
            value = arg[j:]
            if not value:
                if i >= len(argv):
                    raise _e(
                        QT_TRANSLATE_NOOP("SshCommand", "ssh option -{letter} needs a value"),
                        letter=letter,
                    )
                value = argv[i]
                i += 1
            r.option(letter, value)
            break
    return i


def parse_ssh(cmd: str) -> ParsedSsh:
    """The target of an ssh command line; raises SshCommandError."""
    argv = _split(cmd)
    r = _Reader()
    i = _read_options(argv, 1, r)
    if i >= len(argv):
        raise _e(
            QT_TRANSLATE_NOOP(
                "SshCommand", "no destination: add `user@host` (or `ssh://user@host:port`)"
            )
        )
    dest = argv[i]
    r.destination(dest)
    i = _read_options(argv, i + 1, r)
    if i < len(argv):
        r.ignored.append("remote command " + repr(shlex.join(argv[i:])))
    host = r.opts.get("hostname", r.dest_host)
    if not host or not _HOST_RE.match(host):
        raise _e(
            QT_TRANSLATE_NOOP("SshCommand", "bad host name {host} in {dest}"),
            host=repr(host),
            dest=repr(dest),
        )
    user = r.opts.get("user")
    if user is not None and (not user or any(c.isspace() for c in user)):
        raise _e(QT_TRANSLATE_NOOP("SshCommand", "bad user name {user}"), user=repr(user))
    return ParsedSsh(
        host=host,
        port=_port(r.opts["port"]) if "port" in r.opts else 22,
        user=user,
        key_path=r.opts.get("identityfile"),
        jump=r.opts.get("proxyjump"),
        ignored=tuple(r.ignored),
    )


def parse_ssh_command(cmd: str) -> dict[str, Any]:
    """→ ``{"host", "port", "user", "key_path", "jump"}`` (port 22 and None when not given);
    raises SshCommandError. ``parse_ssh`` also says what was ignored."""
    return parse_ssh(cmd).as_dict()
