""" "Mark as mine" on the alert of a process that is not the job's (``proc_suspect``): the
alert says "if it is yours, mark it as yours from this alert", and this is where.

A button beside "Open" under the alert list, enabled for that alert only. It writes the
process names into the host's ``allowed_processes`` in config.toml (``core.config.mine``)
and gives the rule engine the host's new config at once (on the hub's thread, through the
bridge), so the alert resolves on the next process list instead of waiting for the config
watch. A host the file does not hold (the demo fleet) says so and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QPushButton

from gpufleet.core.config.configfile import ConfigError
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.mine import mark_as_mine, mine_names
from gpufleet.core.text.judgment import marked_text

CONDITION = "proc_suspect"


class MarkMine(QObject):
    def __init__(
        self,
        window: Any,
        set_host: Callable[[HostConfig], None],
        *,
        config_path: Path | None = None,
    ) -> None:
        """``window``: the main window (its ``panel`` and ``show_outcome``); ``set_host``:
        gives the rule engine a host's new config (on the engine's thread)."""
        super().__init__(window)
        self.window = window
        self.set_host = set_host
        self.config_path = config_path
        panel = window.panel
        self.button = QPushButton(self.tr("Mark as mine"))
        self.button.setToolTip(
            self.tr(
                "This process is yours: add its name to the host's allowed processes in "
                "config.toml, so that it is no longer flagged there"
            )
        )
        self.button.setEnabled(False)
        self.button.setVisible(False)
        self.button.clicked.connect(self.mark_current)
        panel.alert_buttons.insertWidget(1, self.button)
        panel.alert_current.connect(self._current)

    def _current(self, alert: Any) -> None:
        flagged = alert is not None and getattr(alert, "condition", None) == CONDITION
        self.button.setVisible(flagged)
        self.button.setEnabled(flagged and bool(mine_names(alert.evidence)))

    def mark_current(self) -> None:
        alert = self.window.panel.current_alert()
        if alert is None or alert.condition != CONDITION:
            return
        names = mine_names(alert.evidence)
        try:
            host = mark_as_mine(alert.host, names, self.config_path)
        except ConfigError as e:
            self.window.show_outcome(str(e), ok=False)
            return
        self.set_host(host)
        self.button.setEnabled(False)
        self.window.show_outcome(" ".join(marked_text(alert.host, n) for n in names))
