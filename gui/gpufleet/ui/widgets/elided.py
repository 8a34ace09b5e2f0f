"""A one-line label that shrinks: it draws its text elided ("h100-a 8× H100 · driv…") and
shows the whole text as a tooltip, so it never sets a window's minimum width.

A QLabel's minimum width is its whole text; one long status ("reconnecting: …") in a header
used to widen the main window past a laptop screen, and it never shrank back. The text is a
list of parts, each with its own weight and colour (the host name bold, the rest muted), so
headers keep their look without rich text (which Qt cannot elide).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget


@dataclass(frozen=True)
class Part:
    text: str
    bold: bool = False
    colour: str | None = None  # None: the palette's text colour


class ElidedLabel(QWidget):
    def __init__(self, parent: QWidget | None = None, *, min_chars: int = 8) -> None:
        super().__init__(parent)
        self._parts: tuple[Part, ...] = ()
        self._min_chars = min_chars
        # Ignored: the layout gives it what is left over, never its whole text; the explicit
        # minimum (a layout ignores the minimumSizeHint of an Ignored widget) keeps a few
        # characters readable before neighbours such as the range buttons fold.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(self.minimumSizeHint().width())

    def set_parts(self, parts: Sequence[Part], tooltip: str | None = None) -> None:
        parts = tuple(p for p in parts if p.text)
        if parts == self._parts:
            return
        self._parts = parts
        self.setToolTip(tooltip if tooltip is not None else self.text())
        self.updateGeometry()
        self.update()

    def set_text(self, text: str, colour: str | None = None) -> None:
        self.set_parts([Part(text, colour=colour)])

    def text(self) -> str:
        return "".join(p.text for p in self._parts)

    def _font(self, bold: bool) -> QFont:
        f = QFont(self.font())
        f.setBold(bold)
        return f

    def full_width(self) -> int:
        return sum(QFontMetrics(self._font(p.bold)).horizontalAdvance(p.text) for p in self._parts)

    def sizeHint(self) -> QSize:
        fm = QFontMetrics(self.font())
        return QSize(self.full_width() + 2, fm.height() + 2)

    def minimumSizeHint(self) -> QSize:
        fm = QFontMetrics(self.font())
        return QSize(fm.averageCharWidth() * self._min_chars, fm.height() + 2)

    def is_elided(self) -> bool:
        return self.full_width() > self.width()

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        try:
            x, room = 0, self.width()
            base = self.palette().color(self.foregroundRole())
            for part in self._parts:
                if room <= 0:
                    break
                font = self._font(part.bold)
                fm = QFontMetrics(font)
                text = part.text
                w = fm.horizontalAdvance(text)
                if w > room:
                    text = fm.elidedText(text, Qt.TextElideMode.ElideRight, room)
                    w = fm.horizontalAdvance(text)
                p.setFont(font)
                p.setPen(QColor(part.colour) if part.colour else base)
                p.drawText(x, 0, w + 1, self.height(), Qt.AlignmentFlag.AlignVCenter, text)
                x += w
                room -= w
        finally:
            p.end()
