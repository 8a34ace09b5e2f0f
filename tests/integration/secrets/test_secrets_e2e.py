"""End to end: a real process whose command line carries secrets in every shape the sampler
must hide runs on a (fake-NVML) GPU of a local host; the CLI streams it (recording history),
shows it as a table, checks the host, exports CSV, JSONL and an evidence bundle, diagnoses,
replays the recorded stream and finally kills the process (the audit log keeps its command
line). Then every file written under the test's HOME, config and data dirs, and every
output, is searched for the planted secrets: inside zip members and inside every SQLite cell
(zlib-compressed blobs decompressed) too. None may appear."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import ROOT

FAKES = ROOT / "tests" / "fakes"
PROFILE = ROOT / "tests" / "fixtures" / "nvml" / "h100x8.json"

# One distinct secret per shape, so that a failure names the shape that leaked.
SECRETS = {
    "short_attached": "Plnt01short",
    "short_separate": "Plnt02sep",
    "redis_a": "Plnt03redis",
    "curl_user": "Plnt04curl",
    "slack": "Plnt05slack",
    "discord": "Plnt06discord",
    "key": "Plnt07key",
    "wandb": "Plnt08wandb",
    "java": "Plnt09java",
    "camel": "Plnt10camel",
    "bearer": "Plnt11bearer",
    "url": "Plnt12url",
    "env": "Plnt13env",
    "pascal": "Plnt14pascal",
}


def planted_argv() -> list[str]:
    s = SECRETS
    return [
        "-c",
        "import time; time.sleep(300)",
        f"-p{s['short_attached']}",
        "-p",
        s["short_separate"],
        "redis-cli",
        "-a",
        s["redis_a"],
        "curl",
        "-u",
        f"alice:{s['curl_user']}",
        f"https://hooks.slack.com/services/T01/B02/{s['slack']}",
        f"--hook=https://discord.com/api/webhooks/123/{s['discord']}",
        "--key",
        s["key"],
        f"--wandb-key={s['wandb']}",
        f"-Djavax.net.ssl.keyStorePassword={s['java']}",
        "--accessToken",
        s["camel"],
        "--bearer",
        s["bearer"],
        f"postgresql://app:{s['url']}@db/x",
        f"HF_TOKEN={s['env']}",
        "--ClientSecret",
        s["pascal"],
    ]


@pytest.fixture
def planted() -> Iterator[subprocess.Popen[bytes]]:
    # argv[0] "mysql": its -p takes a password (bash's exec -a names the process so).
    script = "exec -a mysql " + " ".join([sys.executable, *(f"'{a}'" for a in planted_argv())])
    p = subprocess.Popen(["bash", "-c", script])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        cmdline = Path(f"/proc/{p.pid}/cmdline").read_bytes()
        if cmdline.startswith(b"mysql\0"):
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the planted process did not start")
    yield p
    p.kill()
    p.wait()


def texts_of(path: Path) -> Iterator[tuple[str, bytes]]:
    """The bytes of a file, of each zip member and of each SQLite cell (blobs inflated)."""
    data = path.read_bytes()
    yield str(path), data
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                yield f"{path}:{name}", z.read(name)
    if data.startswith(b"SQLite format 3\0"):
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            q = "SELECT name FROM sqlite_master WHERE type='table'"
            tables = [r[0] for r in con.execute(q)]
            for t in tables:
                for row in con.execute(f'SELECT * FROM "{t}"'):
                    for cell in row:
                        if isinstance(cell, bytes):
                            yield f"{path}:{t}", cell
                            with contextlib.suppress(zlib.error):
                                yield f"{path}:{t} (inflated)", zlib.decompress(cell)
                        elif isinstance(cell, str):
                            yield f"{path}:{t}", cell.encode()
        finally:
            con.close()


@pytest.mark.slow
def test_no_planted_secret_in_any_file_or_output(
    tmp_path: Path, planted: subprocess.Popen[bytes]
) -> None:
    prof = json.loads(PROFILE.read_text())
    prof["defaults"]["nvmlDeviceGetComputeRunningProcesses"] = [
        {"pid": planted.pid, "usedGpuMemory": 1 << 30}
    ]
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps(prof))
    app = tmp_path / "app"  # everything the app writes lands here
    home, cfg, data, out = app / "home", app / "config", app / "data", app / "out"
    for d in (home, cfg, data, out):
        d.mkdir(parents=True)
    (cfg / "config.toml").write_text(
        '[[hosts]]\nname = "gpu"\ntransport = "local"\nbackend = "nvml"\n'
    )
    env = {
        **os.environ,
        "HOME": str(home),
        "GPUFLEET_CONFIG_DIR": str(cfg),
        "GPUFLEET_DATA_DIR": str(data),
        "PYTHONPATH": str(FAKES),
        "GPUFLEET_FAKE_NVML": str(profile),
        "QT_QPA_PLATFORM": "offscreen",
    }
    outputs: list[tuple[str, bytes]] = []
    state = ("--state-dir", str(home / ".cache" / "gpufleet"))

    def gpufleet(*args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[bytes]:
        p = subprocess.run(
            [sys.executable, "-m", "gpufleet", *args],
            capture_output=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=out,
            check=False,
        )
        outputs.append((f"gpufleet {' '.join(args)}: stdout", p.stdout))
        outputs.append((f"gpufleet {' '.join(args)}: stderr", p.stderr))
        assert p.returncode in ok, (args, p.returncode, p.stderr.decode()[-2000:])
        return p

    try:
        stream = gpufleet("stream", "gpu", "--seconds", "6").stdout
        # The process really was seen, its command line redacted.
        procs = [json.loads(ln) for ln in stream.splitlines() if b'"kind":"procs"' in ln]
        cmds = {p["cmd"] for m in procs for p in m["procs"] if p["pid"] == planted.pid}
        assert cmds and all(c.startswith("mysql ") and "***" in c for c in cmds), cmds
        (out / "stream.jsonl").write_bytes(stream)
        gpufleet("stream", "gpu", "--seconds", "3", "--format", "table", "--no-record")
        gpufleet("check", "gpu", ok=(0, 1))
        gpufleet("check", "gpu", "--format", "json", ok=(0, 1))
        gpufleet("export", "gpu", "--since", "1h", "--format", "csv", "--out", "h.csv")
        gpufleet("export", "gpu", "--since", "1h", "--format", "jsonl", "--out", "h.jsonl")
        gpufleet("export", "gpu", "--around", "now", "--window", "10m", "--bundle", "b.zip")
        gpufleet("diagnose", "gpu", "--window", "10m", ok=(0, 1))
        gpufleet("diagnose", "gpu", "--window", "10m", "--format", "json", ok=(0, 1))
        gpufleet("replay", "stream.jsonl", ok=(0, 1))
        gpufleet("kill", "gpu", str(planted.pid), "--yes", "--grace", "5")
    finally:
        subprocess.run(
            [sys.executable, "-m", "gpufleet_sampler", "stop", "--backend", "nvml", *state],
            env={**env, "PYTHONPATH": f"{FAKES}{os.pathsep}{ROOT / 'remote'}"},
            capture_output=True,
            timeout=60,
            check=False,
        )
    files = [p for p in app.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"history.sqlite", "audit.jsonl", "b.zip", "h.csv"} <= names, names
    audit = (data / "audit.jsonl").read_text()
    assert str(planted.pid) in audit
    leaks = []
    for where, blob in [*outputs, *(t for f in files for t in texts_of(f))]:
        for shape, secret in SECRETS.items():
            if secret.encode() in blob:
                leaks.append(f"{shape} in {where}")
    assert not leaks, leaks
