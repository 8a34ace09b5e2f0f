"""Everything gpufleet writes under its config and data dirs is private: directories 0700,
files 0600 (SQLite's -wal and -shm too), whatever the umask, and what an older version left
wider is tightened."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest
from gpufleet.core.config import paths
from gpufleet.core.config.configfile import AppConfig, save_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.history.audit import append_audit
from gpufleet.core.history.store import Store
from gpufleet.core.link import hostkeys
from gpufleet.core.link.transport import LocalTransport
from gpufleet.core.link.zipapp import build_sampler_zipapp

from tests.support.synth import make_hello


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def modes(root: Path) -> dict[str, int]:
    out = {str(root): stat.S_IMODE(root.stat().st_mode)}
    for p in root.rglob("*"):
        out[str(p)] = stat.S_IMODE(p.stat().st_mode)
    return out


def assert_private(root: Path) -> None:
    for name, mode in modes(root).items():
        want = 0o700 if Path(name).is_dir() else 0o600
        assert mode == want, f"{name}: {mode:o}, want {want:o}"


def test_everything_the_app_writes_is_private(open_umask: None, tmp_path: Path) -> None:
    save_config(AppConfig(hosts=[HostConfig(name="h", host="10.0.0.1")]))
    store = Store(paths.history_file())
    store.write("h", make_hello())
    store.flush()
    # While open: the WAL and shared-memory files exist now.
    assert any(p.name.endswith("-wal") for p in paths.data_dir().iterdir())
    assert_private(paths.data_dir())
    store.close()
    demo = Store(paths.history_file(demo=True))
    demo.close()
    append_audit({"action": "kill", "host": "h", "pid": 1}, demo=False)
    append_audit({"action": "kill", "host": "h", "pid": 1}, demo=True)
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "k")], check=True
    )
    key = paramiko.PKey.from_path(tmp_path / "k")
    hostkeys.KnownHosts().add("[10.0.0.1]:22", key)
    build_sampler_zipapp()
    LocalTransport(use_zipapp=True).ensure_sampler()
    assert_private(paths.config_dir())
    assert_private(paths.data_dir())


def test_wider_dirs_and_files_left_by_an_older_version_are_tightened(open_umask: None) -> None:
    data = paths.data_dir()
    data.mkdir(parents=True, exist_ok=True)
    data.chmod(0o755)
    hist = paths.history_file()
    hist.touch(mode=0o644)
    hist.chmod(0o644)
    Store(hist).close()
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert stat.S_IMODE(hist.stat().st_mode) == 0o600
    cfg = paths.config_dir()
    cfg.mkdir(parents=True, exist_ok=True)
    cfg.chmod(0o755)
    save_config(AppConfig())
    assert_private(cfg)


def test_a_parent_above_the_app_dirs_is_left_alone(
    open_umask: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "share"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    monkeypatch.setenv("GPUFLEET_DATA_DIR", str(shared / "gpufleet"))
    Store(paths.history_file()).close()
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
    assert_private(shared / "gpufleet")


def test_a_store_outside_the_app_dirs_never_tightens_a_shared_dir(
    open_umask: None, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp
    Store(shared / "h.sqlite").close()
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert stat.S_IMODE((shared / "h.sqlite").stat().st_mode) == 0o600
    Store(shared / "new" / "deeper" / "h.sqlite").close()
    assert stat.S_IMODE((shared / "new").stat().st_mode) == 0o700  # made here: private
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
