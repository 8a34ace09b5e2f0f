"""The kill confirmation: everything needed to be sure it is the right process (host, GPU,
PID, user, command, GPU memory), and the follow-up offer of KILL when TERM was not enough."""

from __future__ import annotations

import html

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from gpufleet.core.wire.messages import Proc


def _gib(b: int | None) -> str:
    if b is None:
        return QCoreApplication.translate("KillDialog", "not reported")
    return f"{b / 2**30:.2f} GiB"


class KillDialog(QDialog):
    def __init__(
        self,
        parent: QWidget | None,
        host: str,
        proc: Proc,
        signal: str = "TERM",
        grace_s: float = 5.0,
        note: str = "",
    ) -> None:
        super().__init__(parent)
        self.host, self.proc, self.signal = host, proc, signal
        self.setWindowTitle(
            self.tr("Send {signal} to PID {pid} on {host}?").format(
                signal=signal, pid=proc.pid, host=host
            )
        )
        self.setModal(True)
        lay = QVBoxLayout(self)
        cmd = html.escape(proc.cmd or proc.name or "?")
        rows = [
            (self.tr("Host"), html.escape(host)),
            (self.tr("GPU"), str(proc.gpu)),
            (
                self.tr("PID"),
                self.tr("{pid} (started at tick {ticks}; a reused PID is refused)").format(
                    pid=proc.pid, ticks=proc.start_ticks
                ),
            ),
            (self.tr("User"), html.escape(proc.user or "?")),
            (self.tr("Name"), html.escape(proc.name or "?")),
            (self.tr("Command"), f"<code>{cmd}</code>"),
            (self.tr("GPU memory"), _gib(proc.mem_bytes)),
        ]
        table = "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in rows)
        what = (
            self.tr(
                "gpufleet sends <b>{signal}</b> and waits up to {grace} s for it to exit."
            ).format(signal=signal, grace=f"{grace_s:.0f}")
            if signal == "TERM"
            else self.tr("<b>KILL</b> ends it at once: it gets no chance to save anything.")
        )
        label = QLabel(f"{note}<table>{table}</table><p>{what}</p>")
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setWordWrap(True)
        label.setMinimumWidth(520)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(label)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText(self.tr("Send {signal}").format(signal=signal))
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
