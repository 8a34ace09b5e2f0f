"""The arrival benchmark from the GUI: "Is this the card I paid for?" on one host.

The run is a blocking call over the host's link, so it goes to the QThreadPool; its progress
lines come back through a queued signal (the pool thread never touches a widget). Cancel sets
an event that the next progress line turns into ``BenchCancelled``: the stream closes, and
the end of its stdin makes the instance end the benchmark's process group. The result is
shown per GPU with measured / good card / datasheet / advertised side by side, and the
same host's earlier runs and the user's other rentals of the model beside them; the dialog
fits a 1366x768 screen (the table scrolls, the columns are sized to their contents).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from gpufleet_sampler.bench_protocol import KIND_RESULT, KIND_SKIP, KIND_START, METRICS
from PySide6.QtCore import QObject, QThreadPool, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpufleet.core.text.bench import (
    HEADERS,
    metric_word,
    progress_line,
    share_of_good,
    verdict_line,
    verdict_word,
)
from gpufleet.core.text.bench_reasons import reason_of
from gpufleet.core.text.catalogue import translated
from gpufleet.core.text.sanitize import clean
from gpufleet.ui.background.worker import run_in_pool

# runner(on_message, cancelled) -> the judged result (core.pipeline.bench.run_bench's dict)
BenchRunner = Callable[[Callable[[dict[str, Any]], None], threading.Event], dict[str, Any]]
DIALOG_SIZE = (1120, 640)  # inside 1366x768 with a panel and the window frame
WHY_LINES = 4  # reasons shown in full under the table; the rest in their rows


class BenchCancelled(Exception):
    """The user pressed Cancel: raised in the pool thread at the next progress line."""


class _Progress(QObject):
    line = Signal(object)  # one decoded progress object, emitted from the pool thread


def _num(v: Any) -> str:
    return f"{v:.1f}" if isinstance(v, int | float) else "-"


class BenchDialog(QDialog):
    finished_result = Signal(object)  # the judged result, once a run ends with one

    def __init__(
        self,
        parent: QWidget | None,
        host: str,
        runner: BenchRunner,
        pool: QThreadPool | None = None,
    ) -> None:
        super().__init__(parent)
        self.host = host
        self.runner = runner
        self.pool = pool or QThreadPool.globalInstance()
        self.bench_result: dict[str, Any] | None = None
        self.running = False
        self._cancel = threading.Event()
        self._steps = 0
        self._done = 0
        self.setWindowTitle(self.tr("Benchmark {host}").format(host=host))
        self.resize(*DIALOG_SIZE)
        lay = QVBoxLayout(self)
        self.intro = QLabel(
            self.tr(
                "Is this the card you paid for? About a minute of matmul, memory, PCIe and "
                "GPU-to-GPU copies on the instance, with what it already has (nothing is "
                "installed). GPUs another process uses are skipped. Your job slows down "
                "while it runs."
            )
        )
        self.intro.setWordWrap(True)
        lay.addWidget(self.intro)
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        lay.addWidget(self.verdict)
        self.progress = QProgressBar()
        self.progress.setFormat(self.tr("%v of %m steps"))
        lay.addWidget(self.progress)
        self.status = QLabel()
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(8)
        # The four references are core.text.bench's words: its context, not this dialog's.
        self.tree.setHeaderLabels(
            [
                self.tr("GPU / measurement"),
                *(translated("Bench", h) for h in HEADERS[:2]),
                self.tr("% of good card"),
                *(translated("Bench", h) for h in HEADERS[2:]),
                self.tr("This host before"),
                self.tr("Your other rentals"),
            ]
        )
        self.tree.setAlternatingRowColors(True)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        lay.addWidget(self.tree, 1)
        # The reasons in full (a tree row cuts them): what is wrong, and the likely cause.
        self.why = QLabel()
        self.why.setWordWrap(True)
        self.why.hide()
        lay.addWidget(self.why)
        buttons = QDialogButtonBox()
        self.run_btn = QPushButton(self.tr("Run benchmark"))
        self.cancel_btn = QPushButton(self.tr("Cancel benchmark"))
        self.close_btn = QPushButton(self.tr("Close"))
        for b in (self.run_btn, self.cancel_btn):
            buttons.addButton(b, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.close_btn, QDialogButtonBox.ButtonRole.RejectRole)
        self.run_btn.clicked.connect(self.start)
        self.cancel_btn.clicked.connect(self.cancel)
        self.close_btn.clicked.connect(self.reject)
        lay.addWidget(buttons)
        self._bridge = _Progress()
        self._bridge.line.connect(self._on_line)
        self._idle()

    # -- running ---------------------------------------------------------------------------

    def start(self) -> None:
        if self.running:
            return
        self.running = True
        self._cancel.clear()
        self._steps = self._done = 0
        self.progress.setRange(0, 0)  # busy until the instance says how many steps
        self.progress.show()
        self.status.setText(self.tr("Starting the benchmark on {host}…").format(host=self.host))
        self.verdict.clear()
        self.run_btn.setEnabled(False)
        self.cancel_btn.setEnabled(True)
        cancel, emit = self._cancel, self._bridge.line.emit

        def on_message(obj: dict[str, Any]) -> None:
            if cancel.is_set():
                raise BenchCancelled
            emit(obj)

        run_in_pool(lambda: self.runner(on_message, cancel), self._done_ok, self._failed, self.pool)

    def cancel(self) -> None:
        if self.running:
            self._cancel.set()
            self.cancel_btn.setEnabled(False)
            self.status.setText(
                self.tr("Cancelling: the instance ends the benchmark at its next step…")
            )

    def reject(self) -> None:
        self.cancel()  # closing the dialog does not leave a run going on the instance
        super().reject()

    def _idle(self) -> None:
        self.running = False
        self.run_btn.setEnabled(True)
        self.cancel_btn.setEnabled(False)
        self.progress.hide()  # shown while a run goes

    def _on_line(self, obj: Mapping[str, Any]) -> None:
        kind = obj.get("kind")
        if kind == KIND_START:
            self._steps = len(obj.get("measured_gpus") or []) * len(METRICS)
            self.progress.setRange(0, max(1, self._steps))
        elif kind in (KIND_RESULT, KIND_SKIP):
            self._done += 1
            self.progress.setValue(min(self._done, self._steps))
        line = progress_line(obj)
        if line:
            self.status.setText(line)

    def _done_ok(self, result: dict[str, Any]) -> None:
        self._done = self._steps
        self._idle()
        self.show_result(result)
        self.status.setText(self.tr("Done. The result is kept in the history with the host."))
        self.finished_result.emit(result)

    def _failed(self, e: BaseException) -> None:
        self._idle()
        if isinstance(e, BenchCancelled):
            self.status.setText(self.tr("Cancelled: the instance ended the benchmark's processes."))
        else:
            self.status.setText(
                self.tr("The benchmark did not run on {host}: {error}").format(
                    host=self.host, error=clean(str(e))
                )
            )

    # -- the result ------------------------------------------------------------------------

    def show_result(self, result: Mapping[str, Any]) -> None:
        self.bench_result = dict(result)
        self.verdict.setText(f"<b>{_escape(verdict_line(result))}</b>")
        self._show_why(result)
        self.tree.clear()
        compare = result.get("compare") or {}
        earlier = compare.get("host_earlier") or {}
        others = compare.get("same_model") or {}
        for g in result.get("gpus", []):
            top = QTreeWidgetItem(
                [
                    self.tr("GPU {index} {name}: {verdict}").format(
                        index=g.get("index"),
                        name=clean(str(g.get("name"))),
                        verdict=verdict_word(str(g.get("verdict"))),
                    )
                ]
            )
            top.setToolTip(0, reason_of(g))
            self.tree.addTopLevelItem(top)
            why = QTreeWidgetItem([reason_of(g)])
            top.addChild(why)
            why.setFirstColumnSpanned(True)
            measured = g.get("measured") or {}
            good, sheet = g.get("good_card") or {}, g.get("datasheet") or {}
            ad = g.get("advertised") or {}
            for m in METRICS:
                if m not in measured:
                    continue
                row = [
                    metric_word(m),
                    _num(measured[m]),
                    _num(good.get(m)),
                    share_of_good(measured[m], good.get(m)),
                    _num(sheet.get(m)),
                    _num(ad.get(m)),
                    _num(earlier.get(m)),
                    _num(others.get(m)),
                ]
                top.addChild(QTreeWidgetItem(row))
            # Few GPUs: all open. Many: the first (to read the columns by) and every one
            # that is not as expected, so a problem is in view without scrolling.
            top.setExpanded(
                len(result.get("gpus", [])) <= 2
                or g is result["gpus"][0]
                or g.get("verdict") != "as_expected"
            )

    def _show_why(self, result: Mapping[str, Any]) -> None:
        gpus = result.get("gpus", [])
        off = [g for g in gpus if g.get("verdict") != "as_expected"]
        lines = [
            self.tr("GPU {index}: {reason}").format(index=g.get("index"), reason=reason_of(g))
            for g in off[:WHY_LINES]
        ]
        if len(off) > WHY_LINES:
            lines.append(
                self.tr("…and {n} more GPUs: see each one's row.").format(n=len(off) - WHY_LINES)
            )
        if gpus and all(g.get("advertised") is None for g in gpus):
            lines.append(self.tr("Advertised: the provider publishes no figures for this offer."))
        self.why.setText("<br>".join(_escape(x) for x in lines))
        self.why.setVisible(bool(lines))

    def rows(self) -> list[list[str]]:
        """The table as text, top to bottom (for tests and the screenshot check)."""
        out = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top is None:
                continue
            out.append([top.text(0)])
            kids = (top.child(j) for j in range(top.childCount()))
            out += [[c.text(k) for k in range(self.tree.columnCount())] for c in kids if c]
        return out


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
