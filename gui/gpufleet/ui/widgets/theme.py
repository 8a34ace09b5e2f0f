"""Colours, status symbols and pyqtgraph settings, dark or light following the system.

Status is always a symbol AND a colour (colour-blind users read the symbol). GPU colours are
the Okabe-Ito palette first (distinguishable with the common colour-vision deficiencies),
then dashed repeats.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette, QPen

from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP

# Okabe-Ito, reordered so neighbours contrast, plus two light extras.
_GPU_COLOURS = (
    "#56B4E9",  # sky blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#F0E442",  # yellow
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#9AD0A0",  # pale green
)

OK = "ok"
WARN = "warning"
CRIT = "critical"
DOWN = "down"
WAIT = "waiting"
# Worst first: the order used for sorting and for the tray icon.
SEVERITY_RANK = {DOWN: 4, CRIT: 3, WARN: 2, WAIT: 1, OK: 0}
# The order of lists (fleet list, overview): what needs the user first. An unreachable host
# comes after the warnings: nothing can be done on it until it answers, while a critical or
# warning host is burning money now.
LIST_RANK = {CRIT: 4, WARN: 3, DOWN: 2, WAIT: 1, OK: 0}
# Each state its own shape, so that it reads without the colour (unreachable is not critical:
# it was the same ✖ in the same red).
SYMBOL = {OK: "●", WARN: "▲", CRIT: "✖", DOWN: "⊘", WAIT: "◌"}
_STATE_COLOURS = {
    OK: ("#3fb950", "#1a7f37"),
    WARN: ("#e3b341", "#9a6700"),
    CRIT: ("#f85149", "#cf222e"),
    DOWN: ("#f85149", "#cf222e"),
    WAIT: ("#8b949e", "#6e7781"),
}
# Throttle reason categories drawn as bands: (label, colour, bits). The first that matches
# a sample wins, so the most serious cause is what the band shows.
REASON_BANDS: tuple[tuple[str, str, int], ...] = (
    (QT_TRANSLATE_NOOP("Reasons", "thermal"), "#f85149", 0x20 | 0x40),
    (QT_TRANSLATE_NOOP("Reasons", "HW slowdown / power brake"), "#a371f7", 0x08 | 0x80),
    (QT_TRANSLATE_NOOP("Reasons", "power cap"), "#e3b341", 0x04),
    (QT_TRANSLATE_NOOP("Reasons", "clock setting / sync boost"), "#58a6ff", 0x02 | 0x10 | 0x100),
)


@dataclass(frozen=True)
class Theme:
    dark: bool
    bg: str
    fg: str
    muted: str
    grid_alpha: float
    nominal: str
    grid: str = "#262c36"  # opaque: alpha-blended grid lines cost 4x the paint time

    def state_colour(self, state: str) -> QColor:
        dark, light = _STATE_COLOURS.get(state, _STATE_COLOURS[WAIT])
        return QColor(dark if self.dark else light)

    def state_hex(self, state: str) -> str:
        return self.state_colour(state).name()


@functools.lru_cache(maxsize=256)
def gpu_pen_secondary(i: int, dark: bool = True) -> QPen:
    """The second curve of a GPU (memory temperature, RX): the same hue, darker (lighter on
    a light theme), solid. Dotted or dashed pens on long polylines cost several times a
    solid one in Qt's raster engine."""
    c = QColor(gpu_colour(i))
    pen: QPen = pg.mkPen(c.darker(170) if dark else c.lighter(140), width=1)
    return pen


def gpu_colour(i: int) -> str:
    return _GPU_COLOURS[i % len(_GPU_COLOURS)]


@functools.lru_cache(maxsize=256)
def gpu_pen(i: int, width: float = 1.0, style: Qt.PenStyle | None = None) -> QPen:
    """A cached pen (never modify it): making pens is a visible share of a redraw."""
    # Beyond eight GPUs the colours repeat, dashed, so every curve stays identifiable.
    if style is None:
        style = Qt.PenStyle.SolidLine if i < len(_GPU_COLOURS) else Qt.PenStyle.DashLine
    pen: QPen = pg.mkPen(gpu_colour(i), width=width, style=style)
    return pen


def system_is_dark() -> bool:
    forced = os.environ.get("GPUFLEET_THEME")
    if forced in ("dark", "light"):
        return forced == "dark"
    app = QGuiApplication.instance()
    if isinstance(app, QGuiApplication):
        scheme = app.styleHints().colorScheme()
        if scheme == Qt.ColorScheme.Dark:
            return True
        if scheme == Qt.ColorScheme.Light:
            return False
        return app.palette().color(QPalette.ColorRole.Window).lightness() < 128
    return False


def make_theme(dark: bool | None = None) -> Theme:
    if dark is None:
        dark = system_is_dark()
    if dark:
        return Theme(True, "#161b22", "#c9d1d9", "#8b949e", 0.15, "#c9d1d9")
    return Theme(False, "#ffffff", "#24292f", "#57606a", 0.2, "#57606a", "#e4e7eb")


def dark_palette() -> QPalette:
    """A dark Fusion palette (used when the system asks for dark but the style has none,
    and for the headless screenshots)."""
    p = QPalette()
    base, window, text = QColor("#0d1117"), QColor("#161b22"), QColor("#c9d1d9")
    for role, c in (
        (QPalette.ColorRole.Window, window),
        (QPalette.ColorRole.WindowText, text),
        (QPalette.ColorRole.Base, base),
        (QPalette.ColorRole.AlternateBase, QColor("#161b22")),
        (QPalette.ColorRole.Text, text),
        (QPalette.ColorRole.Button, QColor("#21262d")),
        (QPalette.ColorRole.ButtonText, text),
        (QPalette.ColorRole.Highlight, QColor("#1f6feb")),
        (QPalette.ColorRole.HighlightedText, QColor("#ffffff")),
        (QPalette.ColorRole.ToolTipBase, window),
        (QPalette.ColorRole.ToolTipText, text),
        (QPalette.ColorRole.PlaceholderText, QColor("#8b949e")),
        (QPalette.ColorRole.Link, QColor("#58a6ff")),
        (QPalette.ColorRole.Mid, QColor("#30363d")),
        (QPalette.ColorRole.Dark, QColor("#010409")),
    ):
        p.setColor(role, c)
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#6e7681"))
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#6e7681"))
    return p


def apply_pyqtgraph(theme: Theme) -> None:
    # Cheap drawing (the redraw budget in docs/benchmarks.md): no antialiasing, no OpenGL surprises.
    pg.setConfigOptions(antialias=False, background=theme.bg, foreground=theme.fg, useOpenGL=False)
