"""known_hosts handling: tolerant reading, append-only adds, forget."""

from __future__ import annotations

import stat
from pathlib import Path

import paramiko
from gpufleet.core.link import hostkeys
from gpufleet.core.link.hostkeys import KnownHosts


def _key(tmp_path: Path, name: str, kind: str = "ed25519") -> paramiko.PKey:
    import subprocess

    p = tmp_path / name
    subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", str(p)], check=True)
    return paramiko.PKey.from_path(p)


def test_a_key_of_a_type_not_on_file_is_changed_not_unknown(tmp_path: Path):
    ed, ec, rsa = _key(tmp_path, "ed"), _key(tmp_path, "ec", "ecdsa"), _key(tmp_path, "r", "rsa")
    kh = KnownHosts(app_file=tmp_path / "known_hosts", system_file=tmp_path / "none")
    kh.add("h", ed)
    for other in (ec, rsa):
        r = kh.check("h", other)
        assert r.verdict == "changed"
        assert [k.get_name() for k in r.expected] == ["ssh-ed25519"]
    # Both keys on file (the host was trusted with each): either is known.
    kh.add("h", ec)
    assert kh.check("h", ec).verdict == "known" and kh.check("h", ed).verdict == "known"
    assert kh.check("h", rsa).verdict == "changed"
    assert kh.check("elsewhere", rsa).verdict == "unknown"


def test_add_check_forget(tmp_path: Path):
    k1, k2 = _key(tmp_path, "k1"), _key(tmp_path, "k2")
    app = tmp_path / "cfg" / "known_hosts"
    kh = KnownHosts(app_file=app, system_file=tmp_path / "none")
    name = hostkeys.host_key_name("127.0.0.1", 2222)
    assert name == "[127.0.0.1]:2222"
    assert kh.check(name, k1).verdict == "unknown"
    app.parent.mkdir()
    app.write_text("# my comment\n")
    kh.add(name, k1)
    kh.add("other", k2)
    assert stat.S_IMODE(app.stat().st_mode) == 0o600 or app.read_text().startswith("# my")
    assert app.read_text().startswith("# my comment\n")  # appended, not rewritten
    assert kh.check(name, k1).verdict == "known"
    changed = kh.check(name, k2)
    assert changed.verdict == "changed"
    assert [hostkeys.fingerprint(k) for k in changed.expected] == [hostkeys.fingerprint(k1)]
    kh.add(name, k1)  # a duplicate line, as a recycled host might leave
    assert kh.forget(name) == 2
    assert kh.check(name, k1).verdict == "unknown"
    assert kh.check("other", k2).verdict == "known"
    assert "# my comment" in app.read_text()


def test_new_file_is_0600(tmp_path: Path):
    app = tmp_path / "kh"
    KnownHosts(app_file=app, system_file=tmp_path / "none").add("h", _key(tmp_path, "k"))
    assert stat.S_IMODE(app.stat().st_mode) == 0o600


def test_system_file_with_markers_hashes_and_garbage(tmp_path: Path):
    k1 = _key(tmp_path, "k1")
    system = tmp_path / "known_hosts"
    hashed = paramiko.HostKeys.hash_host("[10.0.0.5]:41234")
    system.write_text(
        "@cert-authority *.example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBogus\n"
        "@revoked * ssh-ed25519 AAAA\n"
        "not a key line\n"
        "h ssh-ed25519 !!!notbase64\n"
        "h unknown-type AAAA\n"
        f"{hashed} {k1.get_name()} {k1.get_base64()}\n"
        f"plain.example,1.2.3.4 {k1.get_name()} {k1.get_base64()}\n"
    )
    kh = KnownHosts(app_file=tmp_path / "app", system_file=system)
    assert kh.check("[10.0.0.5]:41234", k1).verdict == "known"
    assert kh.check("1.2.3.4", k1).verdict == "known"
    assert kh.check("[10.0.0.5]:41235", k1).verdict == "unknown"
    # The system file is never written.
    before = system.read_text()
    kh.add("new", k1)
    kh.forget("plain.example")
    assert system.read_text() == before
