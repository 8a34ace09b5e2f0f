"""Every package of the source is in pyproject's explicit ``packages`` list: a subpackage
missing there is missing from the wheel and the pipx install (``gpufleet_sampler.benchmark``
was, and every command failed there on import while the checkout worked)."""

from __future__ import annotations

import tomllib

from tests.support.paths import ROOT


def _packages_in(root: str, top: str) -> set[str]:
    base = ROOT / root
    return {
        ".".join((top, *p.parent.relative_to(base).parts))
        for p in base.rglob("__init__.py")
        if "__pycache__" not in p.parts
    }


def test_every_source_package_is_listed() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = _packages_in("gui/gpufleet", "gpufleet") | _packages_in(
        "remote/gpufleet_sampler", "gpufleet_sampler"
    )
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
