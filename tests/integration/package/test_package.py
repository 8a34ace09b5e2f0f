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
  bundled as data, upload it, and get the same content-hashed name as a normal install;
- the installers: ``make deb`` (the same bundle in a .deb), ``dpkg -i``, the installed
  ``gpufleet`` command, ``dpkg -r`` leaving nothing (root and dpkg only: CI); ``make wheel``
  and ``pipx install`` of it in a clean venv, whose ``gpufleet`` renders the demo headless.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

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


# -- the installers: the .deb of this bundle, and the wheel through pipx --

APP_ID = "io.github.gpufleet.GpuFleet"
DEB_PATHS = (
    Path("/opt/gpufleet"),
    Path("/usr/bin/gpufleet"),
    Path(f"/usr/share/applications/{APP_ID}.desktop"),
    Path(f"/usr/share/metainfo/{APP_ID}.metainfo.xml"),
    Path(f"/usr/share/icons/hicolor/scalable/apps/{APP_ID}.svg"),
    Path(f"/usr/share/icons/hicolor/48x48/apps/{APP_ID}.png"),
)


def _run(argv: list[str], timeout: float = 600.0, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kw,  # type: ignore[call-overload]
    )


def _check_shots(out: Path) -> None:
    pngs = sorted(out.glob("*.png"))
    assert {"overview", "cost"} <= {f.stem for f in pngs}, pngs
    for f in pngs:
        assert png_size(f) == (1600, 1000), f


def test_deb_installs_runs_and_removes_cleanly(tmp_path: Path) -> None:
    """`make deb` (reusing the bundle), `dpkg -i`, the installed `gpufleet` command (version,
    headless screenshots), the desktop files where the desktop looks, then `dpkg -r` leaving
    none of its files behind."""
    if os.geteuid() != 0 or shutil.which("dpkg") is None:
        pytest.skip("installing a .deb needs root and dpkg (CI runs as root on Debian)")
    if _run(["dpkg", "-s", "gpufleet"]).returncode == 0:
        pytest.fail("a gpufleet package is already installed: `dpkg -r gpufleet` first")
    before = {p: p.exists() or p.is_symlink() for p in DEB_PATHS}
    assert not any(before.values()), f"left from an earlier install: {before}"
    made = _run(["make", "--no-print-directory", "deb"], cwd=ROOT)
    assert made.returncode == 0, made.stdout[-2000:] + made.stderr[-2000:]
    (deb,) = sorted((ROOT / "dist").glob("gpufleet_*.deb"))
    installed = _run(["dpkg", "-i", str(deb)])
    try:
        assert installed.returncode == 0, installed.stderr
        listed = _run(["dpkg", "-L", "gpufleet"]).stdout.splitlines()
        for p in DEB_PATHS:
            assert str(p) in listed, f"{p} is not in the package"
            assert p.exists(), p
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"}
        env["GPUFLEET_DATA_DIR"] = str(tmp_path / "data")
        env["GPUFLEET_CONFIG_DIR"] = str(tmp_path / "config")
        version = _run(["gpufleet", "--version"], env=env, timeout=120)
        assert version.returncode == 0 and version.stdout.startswith("gpufleet "), version
        out = tmp_path / "shots"
        shot = _run(
            ["gpufleet", "screenshot", "--demo", "--out", str(out), "--minutes", "5"], env=env
        )
        assert shot.returncode == 0, shot.stderr[-3000:]
        _check_shots(out)
        desktop = DEB_PATHS[2]
        if shutil.which("desktop-file-validate"):
            v = _run(["desktop-file-validate", str(desktop)])
            assert v.returncode == 0, v.stdout + v.stderr
        assert "Exec=gpufleet" in desktop.read_text()  # the command /usr/bin provides
    finally:
        removed = _run(["dpkg", "-r", "gpufleet"])
    assert removed.returncode == 0, removed.stderr
    left = [str(p) for p in DEB_PATHS if p.exists() or p.is_symlink()]
    assert not left, f"dpkg -r left {left}"
    assert _run(["dpkg", "-s", "gpufleet"]).returncode != 0


def test_the_wheel_runs_through_pipx_in_a_clean_venv(tmp_path: Path) -> None:
    """`pipx install dist/gpufleet-*.whl` (pipx itself from PyPI in a venv of its own where
    the system has none; the app's dependencies from PyPI), then the pipx-installed
    `gpufleet` renders the demo headless and builds the sampler zipapp from the wheel's
    sources, which runs under the system python3."""
    made = _run(["make", "--no-print-directory", "wheel"], cwd=ROOT)
    assert made.returncode == 0, made.stdout[-2000:] + made.stderr[-2000:]
    (wheel,) = sorted((ROOT / "dist").glob("gpufleet-*.whl"))
    pipx = shutil.which("pipx")
    if pipx is None:
        tools = tmp_path / "pipx-venv"
        assert _run([sys.executable, "-m", "venv", str(tools)]).returncode == 0
        got = _run([str(tools / "bin" / "python"), "-m", "pip", "install", "-q", "pipx"])
        assert got.returncode == 0, got.stderr[-2000:]
        pipx = str(tools / "bin" / "pipx")
    bin_dir = tmp_path / "bin"
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(bin_dir),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
        "QT_QPA_PLATFORM": "offscreen",
        "GPUFLEET_DATA_DIR": str(tmp_path / "data"),
        "GPUFLEET_CONFIG_DIR": str(tmp_path / "config"),
    }
    for k in ("PIP_INDEX_URL", "PIP_FIND_LINKS", "PIP_CACHE_DIR", "LANG"):
        if k in os.environ:
            env[k] = os.environ[k]
    inst = _run([pipx, "install", "--python", sys.executable, str(wheel)], env=env, timeout=900)
    assert inst.returncode == 0, inst.stdout[-2000:] + inst.stderr[-2000:]
    exe = bin_dir / "gpufleet"
    assert exe.is_file(), inst.stdout
    out = tmp_path / "shots"
    shot = _run([str(exe), "screenshot", "--demo", "--out", str(out), "--minutes", "5"], env=env)
    assert shot.returncode == 0, shot.stderr[-3000:]
    _check_shots(out)
    # The zipapp the app would upload, built from what the wheel installed.
    venv_py = tmp_path / "pipx" / "venvs" / "gpufleet" / "bin" / "python"
    code = (
        "import sys; from pathlib import Path\n"
        "from gpufleet.core.link.zipapp import build_sampler_zipapp\n"
        "print(build_sampler_zipapp(Path(sys.argv[1])))\n"
    )
    built = _run([str(venv_py), "-c", code, str(tmp_path / "zipapp")], env=env)
    assert built.returncode == 0, built.stderr[-2000:]
    pyz = Path(built.stdout.strip())
    assert pyz.name.startswith("gpufleet-sampler-") and pyz.suffix == ".pyz"
    python3 = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    info = _run([python3, str(pyz), "info", "--backend", "sim"], env=env, timeout=120)
    assert info.returncode == 0, info.stderr[-2000:]
    assert len(json.loads(info.stdout)["gpus"]) == 8  # the sim's default: 8 × A100
