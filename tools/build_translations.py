#!/usr/bin/env python3
"""Extract and compile the GUI's translations (Qt Linguist tools shipped with PySide6).

    tools/build_translations.py            compile every resources/translations/*.ts to .qm
    tools/build_translations.py --update   first merge the source's current strings into the
                                           .ts files (pyside6-lupdate), then compile

``make`` runs the plain form (the .qm files are rebuilt whenever a .ts changes); run
``--update`` after changing user-visible strings, translate what it marks unfinished (Qt
Linguist, or any editor), and commit the .ts and .qm together. tests/ui/i18n/test_translations.py
fails while a string of the source is missing or untranslated in a .ts.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "gui" / "gpufleet"
TRANSLATIONS = ROOT / "resources" / "translations"
LANGUAGES = ("zh_CN",)


def tool(name: str) -> str:
    """pyside6-lupdate / pyside6-lrelease next to this Python, else on PATH."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} not found: install PySide6-Essentials in this environment")
    return found


def source_files() -> list[Path]:
    return sorted(p for p in SOURCES.rglob("*.py") if "__pycache__" not in p.parts)


def lupdate(ts: Path, language: str, *, keep_obsolete: bool = False) -> None:
    """Merge the strings of the source into ``ts`` (new ones come in unfinished)."""
    ts.parent.mkdir(parents=True, exist_ok=True)
    cmd = [tool("pyside6-lupdate"), *map(str, source_files())]
    cmd += ["-source-language", "en", "-target-language", language, "-locations", "none"]
    if not keep_obsolete:
        cmd.append("-no-obsolete")
    cmd += ["-silent", "-ts", str(ts)]
    subprocess.run(cmd, check=True)


def lrelease(ts: Path, qm: Path) -> None:
    subprocess.run([tool("pyside6-lrelease"), "-silent", str(ts), "-qm", str(qm)], check=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="run lupdate over the source first")
    args = ap.parse_args(argv)
    for lang in LANGUAGES:
        ts = TRANSLATIONS / f"gpufleet_{lang}.ts"
        if args.update:
            lupdate(ts, lang)
        lrelease(ts, ts.with_suffix(".qm"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
