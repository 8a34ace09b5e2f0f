"""Parse the ``ssh …`` command line a provider shows (``ssh -p 41234 root@ssh4.example.com``).

Understood: ``-p PORT``, ``-i KEY``, ``-J JUMP``, ``-l USER``, ``user@host``,
``ssh://user@host:port``, and ``-o Port=…/User=…/IdentityFile=…/ProxyJump=…/HostName=…``
(``-o Key=Value`` or ``-o "Key Value"``). Forwarding and session flags (``-L``, ``-R``,
``-D``, ``-N``, ``-T``, ``-A``, ``-v``, …) and their arguments are skipped, as is a remote
command after the destination. Options follow OpenSSH's getopt: ``-p2222`` and ``-vvv``
work. Anything else is a ``SshCommandError`` with one line saying what is wrong.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Any

# OpenSSH's option letters (ssh.c): these take an argument...
_WITH_ARG = set("BbcDEeFIiJLlmOoPpQRSWw")
# ...and these do not.
_NO_ARG = set("46AaCfGgKkMNnqsTtVvXxYy")
_HOST_RE = re.compile(r"^[A-Za-z0-9_.\-]+$|^[0-9A-Fa-f:.]+$")


class SshCommandError(ValueError):
    """A command line that is not a usable ssh command."""


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise SshCommandError(f"bad port {text!r}: expected a number from 1 to 65535")
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
                raise SshCommandError(f"bad address in {dest!r}: unclosed '['")
            host, tail = hostport[1:end], hostport[end + 1 :]
            if tail:
                if not tail.startswith(":"):
                    raise SshCommandError(f"bad address in {dest!r}")
                port = _port(tail[1:])
        elif ":" in hostport:
            host, _, p = hostport.rpartition(":")
            port = _port(p)
        else:
            host = hostport
        return user or None, host, port
    user, _, host = dest.rpartition("@")
    return user or None, host, None


def parse_ssh_command(cmd: str) -> dict[str, Any]:
    """→ ``{"host", "port", "user", "key_path", "jump"}`` (port 22 and None when not given);
    raises SshCommandError."""
    text = cmd.strip()
    if not text:
        raise SshCommandError("empty command: paste an ssh command such as `ssh -p 2222 root@host`")
    try:
        argv = shlex.split(text)
    except ValueError as e:
        raise SshCommandError(f"cannot split the command line ({e})") from None
    if not argv or os.path.basename(argv[0]) != "ssh":
        raise SshCommandError(
            f"not an ssh command: it should start with `ssh` (got {argv[0]!r}); e.g. "
            "`ssh -p 2222 root@host`"
        )
    opts: dict[str, str] = {}
    dest: str | None = None
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            if i < len(argv):
                dest = argv[i]
            break
        if not arg.startswith("-") or arg == "-":
            dest = arg
            break  # what follows is the remote command: not ours
        j = 1
        while j < len(arg):
            letter = arg[j]
            j += 1
            if letter in _NO_ARG:
                continue
            if letter not in _WITH_ARG:
                raise SshCommandError(f"unknown ssh option -{letter} in {arg!r}")
            value = arg[j:]
            if not value:
                if i >= len(argv):
                    raise SshCommandError(f"ssh option -{letter} needs a value")
                value = argv[i]
                i += 1
            _option(letter, value, opts)
            break
    if dest is None:
        raise SshCommandError("no destination: add `user@host` (or `ssh://user@host:port`)")
    user, host, port = _split_destination(dest)
    host = opts.get("hostname", host)
    if not host or not _HOST_RE.match(host):
        raise SshCommandError(f"bad host name {host!r} in {dest!r}")
    # As in OpenSSH, -l and -p (and -o) win over what the destination says.
    user = opts.get("user", user)
    if "port" in opts:
        port = _port(opts["port"])
    if user is not None and (not user or any(c.isspace() for c in user)):
        raise SshCommandError(f"bad user name {user!r}")
    return {
        "host": host,
        "port": port if port is not None else 22,
        "user": user,
        "key_path": opts.get("identityfile"),
        "jump": opts.get("proxyjump"),
    }


def _option(letter: str, value: str, opts: dict[str, str]) -> None:
    if letter == "p":
        opts["port"] = value
    elif letter == "i":
        opts.setdefault("identityfile", value)  # the first -i, as ssh tries it first
    elif letter == "J":
        opts["proxyjump"] = value
    elif letter == "l":
        opts["user"] = value
    elif letter == "o":
        m = re.match(r"^\s*([A-Za-z]+)\s*(?:=\s*|\s+)(.*?)\s*$", value)
        if not m:
            raise SshCommandError(f"bad -o option {value!r}: expected Key=Value")
        key, val = m.group(1).lower(), m.group(2)
        if key in ("port", "user", "identityfile", "proxyjump", "hostname"):
            if key == "identityfile":
                opts.setdefault(key, val)
            else:
                opts[key] = val
    # Every other option (-L, -R, -D, -W, -F, -E, -c, -m, …) does not change whom we reach.
