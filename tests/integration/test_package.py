"""The frozen bundle (``make package`` → dist/gpufleet/) works without the virtualenv.

Slow and opt-in: runs only with ``GPUFLEET_TEST_PACKAGE=1`` (``make package-test`` builds the
bundle, then runs this file). Every command runs the bundle's own executable with an empty
PATH directory (no python3, no virtualenv), no PYTHONPATH and no VIRTUAL_ENV, so whatever it
needs must be inside the bundle:

- ``screenshot --demo`` renders every tab headless (Qt's offscreen platform plugin, fonts,
  pyqtgraph, the rules shipped as package data) to PNGs that are checked pixel by pixel;
- ``stream demo:...`` runs the local sampler through the bundle itself (``gpufleet _sampler``,
  also for the detached daemon) and the simulated workloads as its children;
- ``hosts add`` + ``check`` against a real sshd build the sampler zipapp from the sources
  bundled as data, upload it, and get the same content-hashed name as a normal install.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "dist" / "gpufleet"
EXE = BUNDLE / ("gpufleet.exe" if os.name == "nt" else "gpufleet")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("GPUFLEET_TEST_PACKAGE") != "1",
        reason="builds take minutes: set GPUFLEET_TEST_PACKAGE=1 (make package-test)",
    ),
]


@pytest.fixture
def bundle_env(tmp_path: Path) -> dict[str, str]:
    if not EXE.is_file():
        pytest.fail(f"{EXE} is missing: run `make package` first")
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    keep = ("HOME", "GPUFLEET_CONFIG_DIR", "GPUFLEET_DATA_DIR", "LANG", "DBUS_SESSION_BUS_ADDRESS")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(PATH=str(empty_bin), QT_QPA_PLATFORM="offscreen")
    return env


def run_bundle(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 180.0
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EXE), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    w, h = struct.unpack(">II", head[16:24])
    return int(w), int(h)


def test_bundle_has_no_python_or_venv_dependency() -> None:
    """The bundle carries its own interpreter and the files the app reads at run time."""
    if not EXE.is_file():
        pytest.fail(f"{EXE} is missing: run `make package` first")
    internal = BUNDLE / "_internal"
    assert (internal / "gpufleet" / "resources" / "rules.toml").is_file()
    assert (internal / "gpufleet_sampler" / "__main__.py").is_file()
    assert (internal / "pynvml.py").is_file() or (internal / "pynvml").is_dir()
    plugins = internal / "PySide6" / "Qt" / "plugins"
    for plugin in ("platforms/libqoffscreen.so", "platforms/libqxcb.so", "iconengines"):
        assert (plugins / plugin).exists(), f"Qt plugin {plugin} missing from the bundle"


def test_frozen_screenshots_headless(bundle_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "shots"
    p = run_bundle(
        ["screenshot", "--demo", "--out", str(out), "--minutes", "5"], bundle_env, tmp_path
    )
    assert p.returncode == 0, p.stderr[-3000:]
    pngs = sorted(out.glob("*.png"))
    names = {f.stem for f in pngs}
    assert {"overview", "clocks", "thermal", "memory", "interconnect", "cost"} <= names

    from PySide6.QtGui import QImage

    for f in pngs:
        assert png_size(f) == (1600, 1000)
        img = QImage(str(f))
        assert not img.isNull(), f
        # A rendered window has many colours; a blank or failed render has one or two.
        colours = {
            img.pixel(x, y) for x in range(0, img.width(), 37) for y in range(0, img.height(), 23)
        }
        assert len(colours) > 20, f"{f.name} looks blank ({len(colours)} colours)"


def test_frozen_local_sampler_runs_through_the_bundle(
    bundle_env: dict[str, str], tmp_path: Path
) -> None:
    p = run_bundle(
        ["stream", "demo:foreign-process", "--seconds", "10", "--no-record"], bundle_env, tmp_path
    )
    try:
        assert p.returncode == 0, p.stderr[-3000:]
        msgs = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        kinds = [m["kind"] for m in msgs]
        assert kinds[0] == "hello"
        # Generous: two frozen programs start (the stream and its daemon) on a busy machine.
        assert "sample" in kinds and "procs" in kinds, kinds
        procs = [pr for m in msgs if m["kind"] == "procs" for pr in m["procs"]]
        # The simulated jobs are real processes started by the frozen sampler daemon.
        assert any("eval.py" in pr["cmd"] for pr in procs), procs[:3]
        assert all("hf_Demo" not in pr["cmd"] for pr in procs), "token not redacted"
    finally:
        # The demo daemon outlives the stream by design: stop it (same key: backend, seed...).
        from gpufleet.core.fleet.demo import demo_hosts, demo_state_dir
        from gpufleet.core.link.sampler_argv import stop_argv

        host = next(h for h in demo_hosts() if h.scenario == "foreign-process")
        state = str(demo_state_dir())  # the same GPUFLEET_DATA_DIR as the bundle's
        run_bundle(stop_argv(["_sampler"], host, state), bundle_env, tmp_path)


def test_frozen_deploys_the_same_zipapp_over_ssh(
    bundle_env: dict[str, str], tmp_path: Path, sshd: object
) -> None:
    from gpufleet.core.link.zipapp import sampler_zipapp_bytes

    ssh = f"ssh -p {sshd.port} -i {sshd.client_key} {sshd.user}@127.0.0.1"  # type: ignore[attr-defined]
    add = run_bundle(
        [
            "hosts",
            "add",
            "rental",
            "--ssh",
            ssh,
            "--backend",
            "sim",
            "--scenario",
            "healthy-8xa100",
        ],
        bundle_env,
        tmp_path,
    )
    assert add.returncode == 0, add.stderr
    check = run_bundle(["check", "rental", "--accept-new"], bundle_env, tmp_path)
    assert check.returncode in (0, 1), check.stderr[-3000:]

    def bundled(f: Path) -> bytes | None:
        copy = BUNDLE / "_internal" / f.relative_to(ROOT / "remote")
        return copy.read_bytes() if copy.is_file() else None

    sources = (ROOT / "remote" / "gpufleet_sampler").rglob("*.py")
    stale = [f.name for f in sources if f.read_bytes() != bundled(f)]
    assert not stale, f"the bundle is older than {stale}: run `make package` again"
    name, _ = sampler_zipapp_bytes()
    # The same name as a normal install: the bundle zips the very same bytes.
    home = Path(os.path.expanduser(f"~{sshd.user}"))  # type: ignore[attr-defined]
    remote = home / ".cache" / "gpufleet" / name
    assert remote.is_file(), f"the bundle did not upload {name}: {check.stdout}{check.stderr}"
