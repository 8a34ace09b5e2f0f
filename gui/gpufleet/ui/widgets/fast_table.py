"""A QTableView that paints RowsModel cells from a cache of rendered cell pixmaps.

Qt's item painting draws every visible cell's text on every repaint, through the style and
an elided text layout: ~25 ms for the overview's ~550 visible cells here, repainted once a
second. Text is the cost (~15–30 µs per short string in Qt's raster engine on this machine,
docs/benchmarks.md, GUI), and most cells (host, model, state, price, P-state) do not change
from one second to the next. This view renders each distinct (text, colour, alignment, width)
once into a pixmap and blits it (~3 µs); only the values that changed are drawn anew.

Everything else is the QTableView's: header, sorting, selection, scrolling, tooltips, mouse
and keyboard. Models other than a RowsModel (or a proxy over one) paint the usual way.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, QRect, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPaintEvent, QPalette, QPixmap
from PySide6.QtWidgets import QTableView, QWidget

from gpufleet.ui.widgets.table_model import Cell, RowsModel

PAD = 3  # pixels of text inset: Fusion's item text margin (focus frame margin 2, plus 1), so
# a column Qt sized to its contents (ResizeToContents) fits the text this view draws uncut
HEADER_EXTRA = 24  # a header's margins and its sort arrow
# A header's margins alone: the style makes room for the arrow only in the section that
# shows it, so the other sections' text fits in this much more than its own width.
HEADER_PAD = 12
# Pixmaps kept per view (two generations): twice the cells of a full-screen overview, so the
# unchanged ones survive while the values turn over. Each is as wide as its text, not its
# column (a "92 %" in a 100 px column: ~2.5 KiB instead of 8 at 20 px high): at most ~12 MiB
# per view before, for four views (docs/benchmarks.md, "Issue 28: GUI memory, session 6").
CACHE_CELLS = 1600


class FastTableView(QTableView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Two generations: a lookup that hits the old one moves the pixmap to the new one;
        # when the new one is full the old one is dropped (an LRU without per-hit bookkeeping).
        # Each pixmap with its offset in the cell (right-aligned text sits at the right).
        self._new: dict[tuple[object, ...], tuple[QPixmap, int]] = {}
        self._old: dict[tuple[object, ...], tuple[QPixmap, int]] = {}
        self._font_key: tuple[object, ...] = ()

    def content_width(
        self, column: int, cap_chars: int | None = None, sort_arrow: bool = True
    ) -> int:
        """The width that shows every value of ``column`` and its header (with the sort
        arrow, unless ``sort_arrow`` is false: a column the table is not sorted by) uncut,
        at most ``cap_chars`` average characters. Measured on the model's rows, not on the
        rows on screen (Qt's resizeColumnToContents looks at those only, and a hidden tab
        has none, so its columns came out too narrow)."""
        found = self._source()
        if found is None:
            return self.sizeHintForColumn(column)
        model = found[0]
        fm = QFontMetrics(self.font())
        seen: set[str] = set()
        widest = 0
        for row in model.rows:
            if column < len(row) and row[column].text not in seen:
                seen.add(row[column].text)
                widest = max(widest, fm.horizontalAdvance(row[column].text))
        w = max(self.text_width(widest), self.header_width(column, sort_arrow))
        if cap_chars is not None:
            w = min(w, fm.averageCharWidth() * cap_chars + 2 * PAD)
        return w

    @staticmethod
    def text_width(advance: int) -> int:
        """The column width that shows a text ``advance`` pixels wide uncut."""
        return advance + 2 * PAD + 2

    def header_width(self, column: int, sort_arrow: bool = True) -> int:
        """The width that shows ``column``'s header uncut (and its sort arrow); a header on
        two lines is as wide as its wider line."""
        hfm = QFontMetrics(self.horizontalHeader().font())
        head = str(self.model().headerData(column, Qt.Orientation.Horizontal) or "")
        widest = max(hfm.horizontalAdvance(line) for line in head.split("\n"))
        return widest + (HEADER_EXTRA if sort_arrow else HEADER_PAD)

    def _source(self) -> tuple[RowsModel, QSortFilterProxyModel | None] | None:
        m = self.model()
        if isinstance(m, RowsModel):
            return m, None
        if isinstance(m, QSortFilterProxyModel) and isinstance(m.sourceModel(), RowsModel):
            src = m.sourceModel()
            assert isinstance(src, RowsModel)
            return src, m
        return None

    def paintEvent(self, event: QPaintEvent) -> None:
        found = self._source()
        if found is None:
            super().paintEvent(event)
            return
        model, proxy = found
        vp = self.viewport()
        rows = proxy.rowCount() if proxy is not None else model.rowCount()
        p = QPainter(vp)
        try:
            pal = self.palette()
            area = event.rect()
            p.fillRect(area, pal.color(QPalette.ColorRole.Base))
            if rows == 0:
                return
            top = self.rowAt(area.top())
            bottom = self.rowAt(area.bottom())
            top = 0 if top < 0 else top
            bottom = rows - 1 if bottom < 0 else bottom
            cols = self._columns(area)
            if not cols:
                return
            font = self.font()
            fkey = (font.key(), self.devicePixelRatioF())
            if fkey != self._font_key:
                self._new, self._old, self._font_key = {}, {}, fkey
            fm = QFontMetrics(font)
            alt = self.alternatingRowColors()
            sel = self.selectionModel()
            root = QModelIndex()
            base_text = pal.color(QPalette.ColorRole.Text)
            hi_bg = pal.color(QPalette.ColorRole.Highlight)
            hi_text = pal.color(QPalette.ColorRole.HighlightedText)
            alt_bg = pal.color(QPalette.ColorRole.AlternateBase)
            x0 = min(x for _, x, _ in cols)
            x1 = max(x + w for _, x, w in cols)
            for r in range(top, bottom + 1):
                y = self.rowViewportPosition(r)
                h = self.rowHeight(r)
                if h <= 0:
                    continue
                selected = sel is not None and sel.isRowSelected(r, root)
                if selected:
                    p.fillRect(QRect(x0, y, x1 - x0, h), hi_bg)
                elif alt and r % 2:
                    p.fillRect(QRect(x0, y, x1 - x0, h), alt_bg)
                src = proxy.mapToSource(proxy.index(r, 0)).row() if proxy is not None else r
                if not 0 <= src < len(model.rows):
                    continue
                cells = model.rows[src]
                for c, x, w in cols:
                    if c >= len(cells):
                        continue
                    hit = self._pixmap(cells[c], w, h, selected, base_text, hi_text, fm)
                    if hit is not None:
                        p.drawPixmap(QPoint(x + hit[1], y), hit[0])
        finally:
            p.end()

    def _columns(self, area: QRect) -> list[tuple[int, int, int]]:
        """(logical column, x, width) of the columns that cross ``area``."""
        out = []
        hh = self.horizontalHeader()
        for visual in range(hh.count()):
            c = hh.logicalIndex(visual)
            if hh.isSectionHidden(c):
                continue
            x, w = self.columnViewportPosition(c), self.columnWidth(c)
            if w > 0 and x + w > area.left() and x <= area.right():
                out.append((c, x, w))
        return out

    def _pixmap(
        self,
        cell: Cell,
        w: int,
        h: int,
        selected: bool,
        base_text: QColor,
        hi_text: QColor,
        fm: QFontMetrics,
    ) -> tuple[QPixmap, int] | None:
        if not cell.text:
            return None
        key = (cell.text, cell.colour, cell.align_right, w, h, selected)
        hit = self._new.get(key)
        if hit is not None:
            return hit
        hit = self._old.pop(key, None)
        if hit is None:
            colour = hi_text if selected else (QColor(cell.colour) if cell.colour else base_text)
            hit = self._render(cell, w, h, colour, fm)
        if len(self._new) >= CACHE_CELLS // 2:
            self._old, self._new = self._new, {}
        self._new[key] = hit
        return hit

    def _render(
        self, cell: Cell, w: int, h: int, colour: QColor, fm: QFontMetrics
    ) -> tuple[QPixmap, int]:
        """The cell's text, elided to the column, in ``colour`` on a transparent pixmap as
        wide as the text (plus the margins and a pixel either side for the glyphs' overhang),
        and where in the cell it goes (x offset)."""
        text = fm.elidedText(cell.text, Qt.TextElideMode.ElideRight, max(0, w - 2 * PAD))
        pw = min(w, fm.horizontalAdvance(text) + 2 * PAD + 2)
        ratio = self.devicePixelRatioF()
        pm = QPixmap(max(1, round(pw * ratio)), max(1, round(h * ratio)))
        pm.setDevicePixelRatio(ratio)
        pm.fill(Qt.GlobalColor.transparent)
        p = QPainter(pm)
        try:
            p.setFont(self.font())
            p.setPen(colour)
            align = (
                Qt.AlignmentFlag.AlignRight if cell.align_right else Qt.AlignmentFlag.AlignLeft
            ) | Qt.AlignmentFlag.AlignVCenter
            p.drawText(QRect(PAD, 0, max(0, pw - 2 * PAD), h), align, text)
        finally:
            p.end()
        return pm, (w - pw if cell.align_right else 0)
