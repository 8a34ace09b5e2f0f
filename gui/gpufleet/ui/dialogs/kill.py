"""The kill confirmation: everything needed to be sure it is the right process (host, GPU,
PID here and NVML's host PID, how the two were matched, user, command, GPU memory), and the
follow-up offer of KILL when TERM was not enough. A tree kill names what else it ends."""

from __future__ import annotations

import html

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from gpufleet.core.wire.messages import Proc
from gpufleet.ui.tabs.memory import MATCH_TEXT


def _gib(b: int | None) -> str:
    if b is None:
        return QCoreApplication.translate("KillDialog", "not reported")
    return f"{b / 2**30:.2f} GiB"


def same_process(parent: QWidget | None, host: str, proc: Proc) -> list[Proc]:
    """Every GPU row of ``proc`` (one process on 8 GPUs is 8 rows of the snapshot), from the
    window's live buffers; just ``proc`` when they are not at hand."""
    live = getattr(parent, "live", None)
    snap = live.procs(host) if live is not None else None
    rows = [
        p
        for p in (snap.procs if snap is not None else ())
        if p.pid == proc.pid and p.start_ticks == proc.start_ticks
    ]
    return sorted(rows, key=lambda p: p.gpu) if any(p.gpu == proc.gpu for p in rows) else [proc]


def _gpus_text(rows: list[Proc]) -> tuple[str, str]:
    """(GPUs, GPU memory) of a process over all its GPUs: "0, 1, … 7 (8 GPUs)" and the
    memory per GPU with the sum."""
    if len(rows) == 1:
        return str(rows[0].gpu), _gib(rows[0].mem_bytes)
    gpus = ", ".join(str(p.gpu) for p in rows)
    gpus = QCoreApplication.translate("KillDialog", "{gpus} ({n} GPUs)").format(
        gpus=gpus, n=len(rows)
    )
    mems = [p.mem_bytes for p in rows]
    if any(m is None for m in mems):
        per = ", ".join(_gib(m) for m in mems)
        return gpus, per
    total = sum(m for m in mems if m is not None)
    same = len({m for m in mems}) == 1
    per = (
        QCoreApplication.translate("KillDialog", "{each} on each GPU").format(each=_gib(mems[0]))
        if same
        else ", ".join(_gib(m) for m in mems)
    )
    return gpus, QCoreApplication.translate("KillDialog", "{per}; {total} in all").format(
        per=per, total=_gib(total)
    )


class KillDialog(QDialog):
    def __init__(
        self,
        parent: QWidget | None,
        host: str,
        proc: Proc,
        signal: str = "TERM",
        grace_s: float = 5.0,
        note: str = "",
        tree: bool = False,
    ) -> None:
        super().__init__(parent)
        self.host, self.proc, self.signal, self.tree = host, proc, signal, tree
        title = (
            self.tr("Send {signal} to PID {pid} and its tree on {host}?")
            if tree
            else self.tr("Send {signal} to PID {pid} on {host}?")
        )
        self.setWindowTitle(title.format(signal=signal, pid=proc.pid, host=host))
        self.setModal(True)
        lay = QVBoxLayout(self)
        cmd = html.escape(proc.cmd or proc.name or "?")
        # One process on several GPUs: all of them (a kill ends it on every one).
        gpus, mem = _gpus_text(same_process(parent, host, proc))
        rows = [
            (self.tr("Host"), html.escape(host)),
            (self.tr("GPU"), gpus),
            (
                self.tr("PID"),
                self.tr("{pid} (started at tick {ticks}; a reused PID is refused)").format(
                    pid=proc.pid, ticks=proc.start_ticks
                ),
            ),
            (
                self.tr("Host PID (NVML)"),
                str(proc.host_pid if proc.mapping is not None else proc.pid)
                if proc.host_pid is not None or proc.mapping is None
                else self.tr("none: NVML lists no memory for it"),
            ),
            (self.tr("Match"), self._match(proc)),
            (self.tr("User"), html.escape(proc.user or "?")),
            (self.tr("Name"), html.escape(proc.name or "?")),
            (self.tr("Command"), f"<code>{cmd}</code>"),
            (self.tr("GPU memory"), mem),
        ]
        table = "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in rows)
        what = (
            self.tr(
                "gpufleet sends <b>{signal}</b> and waits up to {grace} s for it to exit."
            ).format(signal=signal, grace=f"{grace_s:.0f}")
            if signal == "TERM"
            else self.tr("<b>KILL</b> ends it at once: it gets no chance to save anything.")
        )
        if tree:
            what += (
                "<p>"
                + self.tr(
                    "Its children and, when its job is gone, the rest of its process group "
                    "get the same signal (each checked by its start time). gpufleet then "
                    "watches NVML until their GPU memory is released."
                )
                + "</p>"
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
        ok.setText(
            (self.tr("Send {signal} to the tree") if tree else self.tr("Send {signal}")).format(
                signal=signal
            )
        )
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def _match(self, proc: Proc) -> str:
        if proc.mapping is None:
            return self.tr("exact (the sampler shares NVML's PID namespace)")
        text = QCoreApplication.translate("MemoryTab", MATCH_TEXT.get(proc.mapping, proc.mapping))
        if proc.orphan:
            text += " · " + self.tr("orphan: its job is gone, it still holds the GPU")
        return html.escape(text)
