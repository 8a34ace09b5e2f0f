"""Parsing the ssh command a provider shows."""

from __future__ import annotations

import pytest
from gpufleet.core.link.ssh_command import SshCommandError, parse_ssh_command


@pytest.mark.parametrize(
    ("cmd", "expected"),
    [
        (
            "ssh -p 41234 -i ~/.ssh/k root@ssh4.example-cloud.com",
            ("ssh4.example-cloud.com", 41234, "root", "~/.ssh/k", None),
        ),
        ("ssh root@1.2.3.4", ("1.2.3.4", 22, "root", None, None)),
        ("ssh host", ("host", 22, None, None, None)),
        ("ssh -l bob -p2222 host", ("host", 2222, "bob", None, None)),
        ("ssh ssh://u@h.example:2200", ("h.example", 2200, "u", None, None)),
        ("ssh ssh://[::1]:2200", ("::1", 2200, None, None, None)),
        ("ssh -J jump@bastion:22 u@h", ("h", 22, "u", None, "jump@bastion:22")),
        # Forwarding and session flags, with and without their arguments, are skipped.
        (
            "ssh -N -T -A -vvv -L 8080:localhost:8080 -R 9000:localhost:9000 -D 1080 "
            "-p 41234 root@ssh4.example.com",
            ("ssh4.example.com", 41234, "root", None, None),
        ),
        ("ssh -NTL 8080:localhost:80 u@h", ("h", 22, "u", None, None)),
        (
            "ssh -o Port=7 -o 'User bob' -o IdentityFile=/k -o ProxyJump=j h",
            ("h", 7, "bob", "/k", "j"),
        ),
        (
            "ssh -o StrictHostKeyChecking=no -o HostName=real.example alias",
            ("real.example", 22, None, None, None),
        ),
        # A remote command after the destination is ignored.
        ("ssh -p 22 u@h nvidia-smi -l 1", ("h", 22, "u", None, None)),
        ("/usr/bin/ssh -i 'my key' u@h", ("h", 22, "u", "my key", None)),
        ("  ssh -tt u@h  ", ("h", 22, "u", None, None)),
    ],
)
def test_parses(cmd, expected):
    d = parse_ssh_command(cmd)
    assert (d["host"], d["port"], d["user"], d["key_path"], d["jump"]) == expected


@pytest.mark.parametrize(
    ("cmd", "expected"),
    [
        ("", "empty command"),
        ("scp a b", "not an ssh command"),
        ("hello world", "not an ssh command"),
        ("ssh -p 22", "no destination"),
        ("ssh -p", "needs a value"),
        ("ssh -p abc host", "bad port 'abc'"),
        ("ssh -p 70000 host", "bad port"),
        ("ssh -Z host", "unknown ssh option -Z"),
        ("ssh 'u@h'\"", "cannot split"),
        ("ssh u@h;rm", "bad host name"),
        ("ssh ssh://u@h:x", "bad port"),
    ],
)
def test_garbage_gives_a_clear_error(cmd, expected):
    with pytest.raises(SshCommandError) as ei:
        parse_ssh_command(cmd)
    assert expected in str(ei.value)
    assert "\n" not in str(ei.value)
