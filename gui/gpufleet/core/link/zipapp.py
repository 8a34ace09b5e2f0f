"""Builds the sampler zipapp that is uploaded to each instance.

One file holds the ``gpufleet_sampler`` package and the laptop's own ``pynvml`` module (from
nvidia-ml-py), so an instance needs only ``python3`` and the NVIDIA driver: nothing is
pip-installed there. The bytes are reproducible (sorted entries, fixed timestamps and
permissions, no ``__pycache__``), so the file is named by its content hash,
``gpufleet-sampler-<sha256[:16]>.pyz``: the same sampler gives the same name, and an upload is
needed only when the name is absent on the host.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import io
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import gpufleet_sampler

from gpufleet.core.config import paths

NAME_PREFIX = "gpufleet-sampler-"
SUFFIX = ".pyz"
# The earliest date a zip file can hold: any fixed value makes the bytes reproducible.
FIXED_DATE = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o644
SHEBANG = b"#!/usr/bin/env python3\n"
# Runs the sampler's CLI; kept to Python 3.8 syntax like the rest of the sampler.
MAIN_PY = b'''"""The gpufleet sampler zipapp: python3 gpufleet-sampler-*.pyz stream ..."""
import sys

from gpufleet_sampler.__main__ import main

sys.exit(main())
'''


class ZipappError(RuntimeError):
    """The zipapp cannot be built (a missing input); the message says what to install."""


def _package_files(root: Path, arc_prefix: str) -> Iterator[tuple[str, Path]]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith((".pyc", ".pyo")) or name.startswith("."):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            yield f"{arc_prefix}/{rel}", path


def _sources() -> list[tuple[str, bytes]]:
    """(archive name, content) of every file, sorted by name."""
    files: dict[str, bytes] = {"__main__.py": MAIN_PY}
    pkg_root = Path(gpufleet_sampler.__file__).resolve().parent
    for arc, path in _package_files(pkg_root, "gpufleet_sampler"):
        files[arc] = path.read_bytes()
    spec = importlib.util.find_spec("pynvml")
    if spec is None or spec.origin is None:
        raise ZipappError(
            "the pynvml module (package nvidia-ml-py) is not installed on this computer; "
            "install it to deploy the sampler"
        )
    origin = Path(spec.origin)
    if origin.name == "__init__.py":
        for arc, path in _package_files(origin.parent, "pynvml"):
            files[arc] = path.read_bytes()
    else:
        files["pynvml.py"] = origin.read_bytes()
    return sorted(files.items())


def _build_bytes() -> bytes:
    buf = io.BytesIO()
    buf.write(SHEBANG)
    with zipfile.ZipFile(buf, "w") as zf:
        for arc, data in _sources():
            info = zipfile.ZipInfo(arc, date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, so that external_attr carries the mode
            info.external_attr = (0o100000 | FILE_MODE) << 16
            zf.writestr(info, data, compresslevel=9)
    return buf.getvalue()


@functools.lru_cache(maxsize=1)
def sampler_zipapp_bytes() -> tuple[str, bytes]:
    """(file name, content) of the sampler zipapp; built once per process."""
    data = _build_bytes()
    digest = hashlib.sha256(data).hexdigest()[:16]
    return f"{NAME_PREFIX}{digest}{SUFFIX}", data


def build_sampler_zipapp(out_dir: Path | None = None) -> Path:
    """Write the zipapp into ``out_dir`` (default: ``<data dir>/sampler``) unless a file of
    that name is already there; returns its path. Written atomically (temp file + rename)."""
    name, data = sampler_zipapp_bytes()
    target_dir = out_dir if out_dir is not None else paths.data_dir() / "sampler"
    paths.ensure_private_dir(target_dir)
    target = target_dir / name
    if target.is_file() and target.stat().st_size == len(data):
        return target
    tmp = target_dir / f".{name}.{os.getpid()}.tmp"
    tmp.write_bytes(data)
    # Private under the data dir (run as `python file.pyz`); as the caller asks elsewhere.
    tmp.chmod(paths.PRIVATE_FILE if out_dir is None else FILE_MODE)
    os.replace(tmp, target)
    return target
