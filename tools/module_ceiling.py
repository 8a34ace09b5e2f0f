#!/usr/bin/env python3
"""The module-length ceiling that ``make lint`` keeps: no Python module over 1,200 lines.

A module past that has grown several jobs; it is split along its seams (see the "Split:"
commits) before it grows further. Function size is kept by ruff (C901 and PLR0915 in
pyproject.toml).

    tools/module_ceiling.py                 check the default roots
    tools/module_ceiling.py DIR_OR_FILE...  check these instead

The default roots are the app, the sampler, tools/, bench/ and tests/ (the fakes and the
support modules included). Exits 1, naming each module over the ceiling and by how much, when
any is.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

CEILING = 1200
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ROOTS = ("gui/gpufleet", "remote/gpufleet_sampler", "tools", "bench", "tests")
SKIP_PARTS = frozenset({"__pycache__", ".venv", "build", "dist"})


def modules(roots: Iterable[Path]) -> Iterator[Path]:
    """Every .py file under ``roots`` (a root may be a file), skipping caches and builds."""
    for root in roots:
        found = [root] if root.is_file() else sorted(root.rglob("*.py"))
        for path in found:
            if not SKIP_PARTS.intersection(path.parts):
                yield path


def line_count(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def over_ceiling(roots: Iterable[Path], ceiling: int = CEILING) -> list[tuple[Path, int]]:
    """(module, its line count) of each module over ``ceiling``, longest first."""
    over = [(p, n) for p in modules(roots) if (n := line_count(p)) > ceiling]
    return sorted(over, key=lambda pn: -pn[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, help="folders or files (default: the app)")
    ap.add_argument("--ceiling", type=int, default=CEILING, help="most lines a module may have")
    args = ap.parse_args(argv)
    roots = args.paths or [ROOT / r for r in DEFAULT_ROOTS]
    missing = [r for r in roots if not r.exists()]
    if missing:
        print(f"module ceiling: no such path: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    over = over_ceiling(roots, args.ceiling)
    for path, n in over:
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(
            f"{shown}: {n} lines, {n - args.ceiling} over the ceiling of {args.ceiling}: "
            "split it along its seams (docs/architecture.md)",
            file=sys.stderr,
        )
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
