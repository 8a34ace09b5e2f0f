"""``gpufleet screenshot --compare A B``: the Compare view of two windows rendered to a PNG,
headless (for the user guide's picture and for a bug report without a display)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication

from gpufleet.core.verdicts.compare import compare
from gpufleet.core.verdicts.window import RunWindow
from gpufleet.ui.dialogs.compare_view import CompareView


def render_compare(out: Path, size: tuple[int, int], a: RunWindow, b: RunWindow) -> Path:
    """Grab the view of ``compare(a, b)`` at ``size`` into ``out/compare.png``."""
    view = CompareView(a, b, compare(a, b))
    try:
        view.resize(*size)
        view.show()
        QApplication.processEvents()
        path = out / "compare.png"
        if not view.grab().save(str(path), "PNG"):
            raise ValueError(f"cannot write {path}")
        return path
    finally:
        view.close()
        view.deleteLater()
        QApplication.processEvents()
