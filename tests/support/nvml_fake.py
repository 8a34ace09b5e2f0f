"""Helpers to run the NVML backend against the fake pynvml (tests/fakes/pynvml.py).

In-process: ``with fake_nvml("h100x8") as fake:`` installs the fake as ``pynvml`` for the
duration (and as the backend's ``N``), loads the profile, and yields the fake module; its
``_fake`` object drives the clock (``set_time``), injects events and records calls.
Subprocesses: ``fake_env(profile_path)`` gives the environment that puts the fake first on
``PYTHONPATH``. The real pynvml stays the one everyone else imports outside these blocks.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.support.paths import FAKES, FIXTURES, ROOT

PROFILES = FIXTURES / "nvml"
# The name of gpufleet_sampler.procs.holders.PID_NAMESPACE_ENV (test_gpu_holders checks it).
PID_NAMESPACE_ENV = "GPUFLEET_PID_NAMESPACE"

_module: ModuleType | None = None


def profile(name: str) -> dict[str, Any]:
    """A fresh (deep-copied) profile by name ("h100x8") so tests can edit it freely."""
    with open(PROFILES / f"{name}.json", encoding="utf-8") as f:
        return copy.deepcopy(json.load(f))


def import_fake() -> ModuleType:
    """The fake module, loaded once under the name ``pynvml`` (as the real one names itself)."""
    global _module
    if _module is not None:
        return _module
    spec = importlib.util.spec_from_file_location("pynvml", FAKES / "pynvml.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    saved = sys.modules.get("pynvml")
    # The real source registers its error classes through sys.modules[__name__].
    sys.modules["pynvml"] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        if saved is not None:
            sys.modules["pynvml"] = saved
        else:
            sys.modules.pop("pynvml", None)
    _module = mod
    return mod


# Card classes for the sampler's CPU bill (bench/sampler.py --card, issue 28): the shapes
# rentals come in. Hopper has GPM (PCIe and NVLink throughput without a field read); the
# others do not, and carry their byte counters in the field read of every tick.
CARD_CLASSES = ("hopper", "a100", "l40s", "4090")


def card_profile(card: str, n: int = 8) -> dict[str, Any]:
    """``n`` GPUs of one card class, derived from the hand-written profiles: ``hopper`` is
    h100x8.json; ``a100`` the same without GPM, with 12 NVLink 3 links (A100 SXM4 80GB);
    ``l40s`` without GPM, NVLink or HBM temperature (GDDR6, PCIe only); ``4090`` is
    rtx4090x2.json (no GPM, NVLink, HBM temperature or PCIe byte counters)."""
    if card not in CARD_CLASSES:
        raise ValueError(f"unknown card class {card!r}: expected one of {CARD_CLASSES}")
    prof = profile("rtx4090x2" if card == "4090" else "h100x8")
    prof["count"] = n
    d = prof["defaults"]
    if card in ("a100", "l40s"):
        for k in [k for k in d if k == "gpm" or k.startswith("gpm:")]:
            del d[k]
        prof["missing"] = [*prof.get("missing", []), "nvmlGpmQueryDeviceSupport"]
        d["nvmlDeviceGetArchitecture"] = 7 if card == "a100" else 9  # Ampere / Ada
    if card == "a100":
        d["nvmlDeviceGetName"] = "NVIDIA A100-SXM4-80GB"
        d["field:91"] = 12
        d["nvmlDeviceGetNvLinkVersion:*"] = 3
        d["field:164:*"] = 25000
    if card == "l40s":
        d["nvmlDeviceGetName"] = "NVIDIA L40S"
        for k in [k for k in d if k.split(":")[1:2] in (["138"], ["139"], ["164"], ["165"])]:
            del d[k]
        for k in [k for k in d if k.startswith("nvmlDeviceGetNvLink")]:
            del d[k]
        d.pop("field:82", None)  # no HBM: no memory temperature
        d["field:91"] = 0
    return prof


@contextmanager
def fake_nvml(prof: str | dict[str, Any]) -> Iterator[Any]:
    """Install the fake pynvml loaded with ``prof`` (a name or a profile dict)."""
    from gpufleet_sampler.backends import nvml_lib

    fake = import_fake()
    fake._fake.load(profile(prof) if isinstance(prof, str) else prof)
    fake._fake.set_time(0.0)
    saved_mod = sys.modules.get("pynvml")
    saved_n = nvml_lib.N
    saved_ns = os.environ.get(PID_NAMESPACE_ENV)
    sys.modules["pynvml"] = fake
    nvml_lib.N = fake
    # The fake reports this process's PIDs ("$self"): the namespace NVML numbers them in is
    # ours, whether or not the test machine is itself a container.
    os.environ[PID_NAMESPACE_ENV] = "host"
    try:
        yield fake
    finally:
        if saved_ns is None:
            os.environ.pop(PID_NAMESPACE_ENV, None)
        else:
            os.environ[PID_NAMESPACE_ENV] = saved_ns
        nvml_lib.N = saved_n
        if saved_mod is not None:
            sys.modules["pynvml"] = saved_mod
        else:
            sys.modules.pop("pynvml", None)
        fake._fake.initialized = 0


@contextmanager
def charged_backend(prof: str | dict[str, Any], cost: str | None, **kw: Any) -> Iterator[Any]:
    """An nvml backend at 1 Hz over the fake loaded with ``prof``, every call charged
    ``cost`` on the fake's virtual CPU clock (its CPU clock too): the plan sees exact
    timings, the same on any machine. Yields (fake module, backend); closes both."""
    from gpufleet_sampler.backends.nvml import NvmlBackend

    with fake_nvml(prof) as fake:
        fake._fake.virtual_cpu = True
        fake._fake.set_cost(cost)
        try:
            b = NvmlBackend(interval=1.0, events=False, cpu_clock=fake._fake.cpu_clock, **kw)
            try:
                yield fake, b
            finally:
                b.close()
        finally:
            fake._fake.set_cost(None)
            fake._fake.virtual_cpu = False


def fake_env(profile_path: Path | str, tick_s: float | None = None) -> dict[str, str]:
    """Environment for a sampler subprocess that must see the fake pynvml."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(FAKES), str(ROOT / "remote")])
    env["GPUFLEET_FAKE_NVML"] = str(profile_path)
    env[PID_NAMESPACE_ENV] = "host"  # as in fake_nvml
    if tick_s is not None:
        env["GPUFLEET_FAKE_NVML_TICK_S"] = str(tick_s)
    return env


def record_trace(
    src: Path, out: Path, seconds: float, interval: float, *extra: str
) -> subprocess.CompletedProcess[bytes]:
    """Run tools/record_nvml_trace.py against the fake driven by ``src``; the trace goes to
    ``out``."""
    return subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "record_nvml_trace.py"),
            "--seconds",
            str(seconds),
            "--interval",
            str(interval),
            *extra,
            "--out",
            str(out),
        ],
        env=fake_env(src),
        cwd=str(ROOT),
        capture_output=True,
        timeout=120,
        check=False,
    )
