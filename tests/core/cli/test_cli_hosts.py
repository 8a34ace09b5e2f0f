"""`gpufleet hosts …` through the real CLI entry point (and one subprocess run)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import paramiko
import pytest
from gpufleet.cli.errors import EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE
from gpufleet.cli.main import main
from gpufleet.core.config import configfile as config
from gpufleet.core.config import secrets
from gpufleet.core.link import hostkeys

from tests.support.paths import ROOT


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["hosts", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_add_from_a_pasted_ssh_command_then_list(capsys, tmp_path, monkeypatch):
    # The key file given with -i must exist (a typo is refused at once).
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "k").write_text("key\n")
    rc, out, _ = run(
        capsys,
        "add",
        "h100-a",
        "--ssh",
        "ssh -p 41234 -i ~/.ssh/k -L 8080:localhost:8080 root@ssh4.example-cloud.com",
        "--price-per-hour",
        "2.49",
        "--currency",
        "eur",
        "--tag",
        "train",
    )
    assert rc == EXIT_OK and "added h100-a" in out
    run(capsys, "add", "sim1", "--backend", "sim", "--scenario", "healthy-8xa100", "--jump", "b")
    h = config.load_config().host("h100-a")
    assert h is not None
    assert (h.host, h.port, h.user, h.key_path, h.price_per_hour, h.currency, h.tags) == (
        "ssh4.example-cloud.com",
        41234,
        "root",
        "~/.ssh/k",
        2.49,
        "EUR",
        ("train",),
    )
    rc, out, _ = run(capsys, "list")
    assert rc == EXIT_OK
    assert "root@ssh4.example-cloud.com:41234" in out and "sim/healthy-8xa100" in out
    rc, out, _ = run(capsys, "list", "--format", "json")
    data = json.loads(out)
    assert [d["name"] for d in data] == ["h100-a", "sim1"]
    assert data[1]["jump"] == "b" and data[1]["backend"] == "sim"


def test_add_with_the_host_before_its_options_keeps_the_port_and_key(capsys, tmp_path, monkeypatch):
    # RunPod's form: before, the options after the destination were taken as a remote
    # command, and port 22 with no key was saved. (The key file given with -i must exist.)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "KEY").write_text("key\n")
    rc, out, _ = run(
        capsys, "add", "pod", "--ssh", "ssh root@1.2.3.4 -p 14561 -i KEY -L 8888:localhost:8888"
    )
    assert rc == EXIT_OK
    h = config.load_config().host("pod")
    assert h is not None
    assert (h.host, h.port, h.user, h.key_path) == ("1.2.3.4", 14561, "root", "KEY")
    assert "added pod (root@1.2.3.4:14561)" in out
    assert "ignored" in out and "-L 8888:localhost:8888" in out


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["add", "x", "--ssh", "scp a b"], EXIT_USAGE, "--ssh: not an ssh command"),
        (["add", "x", "--ssh", "ssh -p nope h"], EXIT_USAGE, "bad port 'nope'"),
        (
            ["add", "x", "--ssh", "ssh root@1.2.3.4 -p 14561 -Z"],
            EXIT_USAGE,
            "unknown ssh option -Z",
        ),
        (["add", "bad name"], EXIT_USAGE, "bad host name"),
        (["add", "x:y"], EXIT_USAGE, "bad host name"),
        (["add", "x", "--backend", "sim"], EXIT_USAGE, "needs --scenario"),
        (
            ["add", "x", "--ssh", "ssh u@h", "--scenario", "crashed-idle"],
            EXIT_USAGE,
            "--scenario is for the simulator: add --backend sim",
        ),
        (["remove", "ghost"], EXIT_NOT_FOUND, "no host named 'ghost'"),
        (["set-secret", "ghost"], EXIT_NOT_FOUND, "no host named 'ghost'"),
        (["forget-key", "ghost"], EXIT_NOT_FOUND, "no host named 'ghost'"),
    ],
)
def test_errors_are_one_line_with_an_exit_code(capsys, argv, code, message):
    rc, _out, err = run(capsys, *argv)
    assert rc == code
    assert message in err
    assert err.startswith("gpufleet: ") and err.count("\n") == 1
    assert "Traceback" not in err


def test_duplicate_add_and_malformed_config(capsys):
    assert run(capsys, "add", "a", "--ssh", "ssh u@h")[0] == EXIT_OK
    rc, _, err = run(capsys, "add", "a", "--ssh", "ssh u@h")
    assert rc == EXIT_USAGE and "already exists" in err
    config.config_file_path().write_text("[[hosts]\n")
    rc, _, err = run(capsys, "list")
    assert rc == EXIT_FAILURE and "not valid TOML" in err and "config.toml" in err


def test_remove_forgets_the_host_and_its_key(capsys, tmp_path):
    run(capsys, "add", "a", "--ssh", "ssh -p 2200 u@10.1.2.3")
    run(capsys, "add", "b", "--ssh", "ssh u@10.9.9.9")
    key = _key(tmp_path)
    kh = hostkeys.KnownHosts()
    kh.add("[10.1.2.3]:2200", key)
    rc, out, _ = run(capsys, "remove", "a")
    assert rc == EXIT_OK and "removed a" in out
    assert config.load_config().names() == ["b"]
    assert kh.check("[10.1.2.3]:2200", key).verdict == "unknown"


def test_forget_key(capsys, tmp_path):
    run(capsys, "add", "a", "--ssh", "ssh -p 2200 u@10.1.2.3")
    hostkeys.KnownHosts().add("[10.1.2.3]:2200", _key(tmp_path))
    rc, out, _ = run(capsys, "forget-key", "a")
    assert rc == EXIT_OK and "forgot 1" in out


def test_import_ssh_config(capsys, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh" / "conf.d").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    (home / ".ssh" / "conf.d" / "a.conf").write_text(
        "Host gpu1\n  HostName ssh4.example.com\n  Port 41234\n  User root\n"
        "  IdentityFile ~/.ssh/rental\n  ProxyJump bastion\n"
    )
    (home / ".ssh" / "config").write_text(
        "Include conf.d/*.conf\nHost gpu2 *.internal\n  HostName 10.0.0.2\nHost *\n  User me\n"
    )
    rc, out, _ = run(capsys, "import-ssh-config")
    assert rc == EXIT_USAGE and "gpu1 gpu2" in out
    rc, _, err = run(capsys, "import-ssh-config", "nope")
    assert rc == EXIT_NOT_FOUND and "no Host entry 'nope'" in err
    rc, out, _ = run(capsys, "import-ssh-config", "gpu1")
    assert rc == EXIT_OK
    rc, out, _ = run(capsys, "import-ssh-config", "--all")
    assert rc == EXIT_OK and "skipped gpu1" in out
    cfg = config.load_config()
    assert cfg.names() == ["gpu1", "gpu2"]
    g1 = cfg.host("gpu1")
    assert g1 is not None
    assert (g1.host, g1.port, g1.user, g1.jump) == ("ssh4.example.com", 41234, "root", "bastion")
    assert g1.key_path == str(home / ".ssh" / "rental")
    g2 = cfg.host("gpu2")
    assert g2 is not None and (g2.host, g2.user) == ("10.0.0.2", "me")


def test_set_secret_from_stdin_without_a_keyring(capsys, monkeypatch):
    import keyring
    from keyring.backends import fail

    run(capsys, "add", "a", "--ssh", "ssh u@h")
    old = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        monkeypatch.setattr(sys, "stdin", io.StringIO("topsecret-value\n"))
        rc, out, err = run(capsys, "set-secret", "a")
    finally:
        keyring.set_keyring(old)
    assert rc == EXIT_FAILURE
    assert "no OS keyring" in err and "ssh-agent" in err
    assert "topsecret-value" not in out + err
    assert "topsecret-value" not in config.config_file_path().read_text()


def test_set_secret_stores_in_the_real_keyring_via_a_subprocess(tmp_path):
    """The real CLI as a user runs it: secret piped on stdin, stored in the Secret Service,
    absent from the config file and from what the command prints."""
    if not os.environ.get("GPUFLEET_TEST_KEYRING_HOME"):
        pytest.skip("needs a private Secret Service: run under tools/run-tests")
    if secrets.store_available():
        pytest.skip(f"no usable Secret Service: {secrets.store_available()}")
    name = f"cli-{uuid.uuid4().hex[:8]}"
    secret = f"pw-{uuid.uuid4().hex}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "gui") + os.pathsep + str(ROOT / "remote")}
    gpufleet = [sys.executable, "-m", "gpufleet.cli.main"]
    subprocess.run([*gpufleet, "hosts", "add", name, "--ssh", "ssh u@h"], env=env, check=True)
    proc = subprocess.run(
        [*gpufleet, "hosts", "set-secret", name, "--kind", "key-passphrase"],
        input=secret + "\n",
        capture_output=True,
        text=True,
        env=env,
    )
    try:
        assert proc.returncode == 0, proc.stderr
        assert secret not in proc.stdout + proc.stderr
        assert secrets.get_secret(name, "key-passphrase") == secret
        assert secret not in config.config_file_path().read_text()
        proc = subprocess.run(
            [*gpufleet, "hosts", "remove", name], capture_output=True, text=True, env=env
        )
        assert proc.returncode == 0 and "deleted its stored key-passphrase" in proc.stdout
        assert secrets.get_secret(name, "key-passphrase") is None
    finally:
        secrets.delete_all(name)


def _key(tmp_path: Path) -> paramiko.PKey:
    p = tmp_path / f"k{uuid.uuid4().hex[:6]}"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(p)], check=True)
    return paramiko.PKey.from_path(p)


def test_import_ssh_config_from_a_missing_file_says_it_is_missing(capsys, tmp_path):
    missing = tmp_path / "no-such-config"
    rc, _, err = run(capsys, "import-ssh-config", "--ssh-config", str(missing))
    assert rc == EXIT_NOT_FOUND
    assert f"{missing} does not exist" in err and "no Host entries" not in err
    assert "gpufleet hosts add" in err
