"""The sampler zipapp: reproducible bytes, content-hashed name, runs on a plain python3."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from gpufleet.core.link import zipapp


def test_builds_byte_identically_twice(tmp_path: Path) -> None:
    a = zipapp._build_bytes()
    b = zipapp._build_bytes()
    assert a == b
    # And in a fresh interpreter (another import order, other mtimes in the cache).
    code = (
        "import hashlib,sys; from gpufleet.core.link import zipapp; "
        "sys.stdout.write(hashlib.sha256(zipapp._build_bytes()).hexdigest())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout == hashlib.sha256(a).hexdigest()


def test_name_is_content_hash_and_contents_are_clean(tmp_path: Path) -> None:
    name, data = zipapp.sampler_zipapp_bytes()
    assert name == f"gpufleet-sampler-{hashlib.sha256(data).hexdigest()[:16]}.pyz"
    path = zipapp.build_sampler_zipapp(tmp_path)
    assert path.name == name and path.read_bytes() == data
    assert zipapp.build_sampler_zipapp(tmp_path) == path
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        infos = zf.infolist()
    assert names == sorted(names)
    assert "__main__.py" in names and "pynvml.py" in names
    assert "gpufleet_sampler/__main__.py" in names and "gpufleet_sampler/daemon/server.py" in names
    assert "gpufleet_sampler/backends/sim.py" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert {i.date_time for i in infos} == {zipapp.FIXED_DATE}
    assert {(i.external_attr >> 16) & 0o777 for i in infos} == {0o644}


def test_default_location_is_the_data_dir() -> None:
    path = zipapp.build_sampler_zipapp()
    assert path.parent == Path(os.environ["GPUFLEET_DATA_DIR"]) / "sampler"


def test_runs_with_plain_python(tmp_path: Path) -> None:
    path = zipapp.build_sampler_zipapp(tmp_path)
    # No checkout on the path: only what the zipapp carries (cwd elsewhere, clean env).
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-I", str(path), "info", "--backend", "sim"],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert isinstance(info, dict) and info
    out = subprocess.run(
        [
            sys.executable,
            "-I",
            str(path),
            "stream",
            "--backend",
            "sim",
            "--interval",
            "0.1",
            "--count",
            "3",
            "--no-wait",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    msgs = [json.loads(x) for x in out.stdout.splitlines()]
    assert msgs[0]["kind"] == "hello"
    assert len([m for m in msgs if m["kind"] == "sample"]) == 3
    assert [m["seq"] for m in msgs[1:]] == list(range(1, len(msgs)))
    # pynvml inside the zipapp is importable from it.
    code = "import sys; sys.path.insert(0, sys.argv[1]); import pynvml; print(pynvml.__file__)"
    out = subprocess.run(
        [sys.executable, "-I", "-c", code, str(path)], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0 and str(path) in out.stdout


def test_daemon_runs_from_the_zipapp(tmp_path: Path) -> None:
    """The detached daemon re-runs the sampler from the zipapp it was started from."""
    path = zipapp.build_sampler_zipapp(tmp_path)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    common = ["--backend", "sim", "--interval", "0.1", "--state-dir", str(tmp_path / "st")]
    run = [sys.executable, "-I", str(path)]
    try:
        out = subprocess.run(
            [*run, "daemon", *common, "--idle-exit", "30"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["status"] == "started"
    finally:
        out = subprocess.run(
            [*run, "stop", *common], capture_output=True, text=True, env=env, timeout=60
        )
    assert json.loads(out.stdout)["stopped"] is True
