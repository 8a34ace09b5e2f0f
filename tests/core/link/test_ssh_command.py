"""Parsing the ssh command a provider shows."""

from __future__ import annotations

import pytest
from gpufleet.core.link.ssh_command import SshCommandError, parse_ssh, parse_ssh_command


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
        # A remote command after the destination is not ours (its -l is nvidia-smi's).
        ("ssh -p 22 u@h nvidia-smi -l 1", ("h", 22, "u", None, None)),
        # Options after the destination, as ssh.c reads them again after the host.
        ("ssh u@h -p 2200 -l other", ("h", 2200, "u", None, None)),
        ("ssh h -i /k -J b uptime -p 5", ("h", 22, None, "/k", "b")),
        # The first value wins, as in ssh (and its config files).
        ("ssh -p 1 -p 2 -o Port=3 h", ("h", 1, None, None, None)),
        ("ssh -l bob alice@h", ("h", 22, "bob", None, None)),
        ("ssh -i /a -i /b h", ("h", 22, None, "/a", None)),
        ("ssh ssh://u@h:2200 -p 9", ("h", 2200, "u", None, None)),
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
        # After the destination too: an unknown letter, a bad port, a missing value.
        ("ssh root@1.2.3.4 -p 14561 -Z", "unknown ssh option -Z"),
        ("ssh root@1.2.3.4 -p 0", "bad port '0'"),
        ("ssh root@1.2.3.4 -i", "ssh option -i needs a value"),
        ("ssh -o Port=x h", "bad port 'x'"),
        ("ssh -o ProxyCommand='nc %h %p' h", "ProxyCommand is not supported"),
        ("ssh -o =x h", "bad -o option"),
    ],
)
def test_garbage_gives_a_clear_error(cmd, expected):
    with pytest.raises(SshCommandError) as ei:
        parse_ssh_command(cmd)
    assert expected in str(ei.value)
    assert "\n" not in str(ei.value)


# The forms the providers print (from their docs, 2026): each must give the port and the key.
@pytest.mark.parametrize(
    ("cmd", "expected", "ignored"),
    [
        # vast.ai, "Connecting to your Instance": forwarding after the destination.
        (
            "ssh -p 20544 root@142.214.185.187 -L 8080:localhost:8080",
            ("142.214.185.187", 20544, "root", None, None),
            ("-L 8080:localhost:8080",),
        ),
        # RunPod, full SSH over exposed TCP: host first, options after.
        (
            "ssh root@213.173.108.12 -p 14561 -i ~/.ssh/id_ed25519",
            ("213.173.108.12", 14561, "root", "~/.ssh/id_ed25519", None),
            (),
        ),
        # RunPod's SSH proxy: the pod id is the user name.
        (
            "ssh abc123-64411e2a@ssh.runpod.io -i ~/.ssh/id_ed25519",
            ("ssh.runpod.io", 22, "abc123-64411e2a", "~/.ssh/id_ed25519", None),
            (),
        ),
        # Lambda: a quoted key path.
        (
            "ssh -i '/home/me/Lambda Keys/key.pem' ubuntu@203.0.113.7",
            ("203.0.113.7", 22, "ubuntu", "/home/me/Lambda Keys/key.pem", None),
            (),
        ),
        # AutoDL ("登录指令").
        (
            "ssh -p 52979 root@connect.westd.seetacloud.com",
            ("connect.westd.seetacloud.com", 52979, "root", None, None),
            (),
        ),
    ],
)
def test_provider_forms(cmd, expected, ignored):
    p = parse_ssh(cmd)
    assert (p.host, p.port, p.user, p.key_path, p.jump) == expected
    assert p.ignored == ignored


def test_what_does_not_change_the_target_is_reported_not_dropped():
    p = parse_ssh("ssh -N -v -o StrictHostKeyChecking=no -i /a u@h -i /b -D 1080 nvidia-smi -q")
    assert (p.host, p.key_path) == ("h", "/a")
    assert p.ignored == (
        "-N",
        "-v",
        "-o StrictHostKeyChecking=no",
        "-i /b (a second key: the first one is used)",
        "-D 1080",
        "remote command 'nvidia-smi -q'",
    )
    note = p.ignored_note()
    assert "StrictHostKeyChecking" in note and "nvidia-smi -q" in note
    assert parse_ssh("ssh u@h").ignored_note() == ""
