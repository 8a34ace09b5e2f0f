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
