"""config.toml watched while the app runs: hosts added, edited or removed elsewhere (``gpufleet
hosts add`` in a terminal, an editor) join, change or leave the fleet without a restart.

A QFileSystemWatcher on the file and on its folder (saving by rename replaces the file, and
a watch on the old one goes quiet), a short debounce (an editor writes in several steps),
and a 2 s poll of the file's size and time as a fallback where change notices do not
arrive (network folders). The file is read in the QThreadPool; the fleet, the rule engine
(on the bridge's thread, through ``bridge.post``) and the window are updated on the GUI
thread. Only hosts that came from the file are ever removed: the demo fleet and Prometheus
host groups are not the file's. A malformed file is said once in the status bar and the
fleet keeps the hosts it has.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QFileSystemWatcher, QObject, QThreadPool, QTimer, Signal

from gpufleet.core.config import paths
from gpufleet.core.config.configfile import load_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.ui.background.worker import run_in_pool

DEBOUNCE_MS = 250
POLL_MS = 2000


class WatchedFleet(Protocol):
    """What the watch changes in the fleet (``core.fleet.Fleet``)."""

    def hosts(self) -> Sequence[HostConfig]: ...
    def add_host(self, h: HostConfig) -> None: ...
    def remove_host(self, name: str) -> None: ...


class HostsWindow(Protocol):
    """What the watch shows in the window (``ui.window.MainWindow``)."""

    @property
    def hosts(self) -> Mapping[str, HostConfig]: ...
    def set_hosts(self, hosts: Sequence[HostConfig]) -> None: ...
    def show_outcome(self, text: str, ok: bool = True) -> None: ...


class HostRules(Protocol):
    """The rule engine's host list (``core.alerts.rules.RuleEngine``)."""

    def set_host(self, host: HostConfig) -> None: ...
    def remove_host(self, name: str) -> None: ...


class Poster(Protocol):
    """Runs a call on the rule engine's thread (``ui.controllers.bridge.Bridge.post``)."""

    def post(self, fn: Callable[[], None]) -> None: ...


class ConfigWatch(QObject):
    # (added, changed, removed) host names, after the fleet and the window were updated.
    hosts_changed = Signal(object, object, object)

    def __init__(
        self,
        fleet: WatchedFleet,
        window: HostsWindow,
        *,
        bridge: Poster | None = None,
        rules: HostRules | None = None,
        pool: QThreadPool | None = None,
        path: Path | None = None,
        loader: Callable[[Path], Sequence[HostConfig]] | None = None,
    ) -> None:
        super().__init__()
        self.fleet = fleet
        self.window = window
        self.bridge = bridge
        self.rules = rules
        self.pool = pool or QThreadPool.globalInstance()
        self.path = path or paths.config_file()
        self.loader = loader or (lambda p: list(load_config(p).hosts))
        # The hosts the file gave: only these may be removed when the file drops them.
        self.from_file: dict[str, HostConfig] = {}
        self._stamp: tuple[int, int] | None = None
        self._reading = False
        self._again = False
        self._last_error = ""
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._changed)
        self.watcher.directoryChanged.connect(self._changed)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self._read)
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._poll_stamp)

    def start(self) -> None:
        """Start watching; the hosts the fleet has now that the file also names count as
        the file's (the app was started from it)."""
        names = {h.name for h in self.fleet.hosts()}
        try:
            self.from_file = {h.name: h for h in self.loader(self.path) if h.name in names}
        except Exception:
            self.from_file = {}
        self._stamp = self._file_stamp()
        self._rewatch()
        self._poll.start()

    def stop(self) -> None:
        self._poll.stop()
        self._debounce.stop()
        for p in self.watcher.files() + self.watcher.directories():
            self.watcher.removePath(p)

    # -- noticing a change ---------------------------------------------------------------

    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def _rewatch(self) -> None:
        folder = self.path.parent
        if folder.is_dir() and str(folder) not in self.watcher.directories():
            self.watcher.addPath(str(folder))
        if self.path.exists() and str(self.path) not in self.watcher.files():
            self.watcher.addPath(str(self.path))

    def _changed(self, _path: str) -> None:
        self._rewatch()
        self._debounce.start()

    def _poll_stamp(self) -> None:
        if self._file_stamp() != self._stamp:
            self._changed(str(self.path))

    # -- reading and applying ------------------------------------------------------------

    def _read(self) -> None:
        stamp = self._file_stamp()
        if stamp == self._stamp:
            return
        if self._reading:
            self._again = True
            return
        self._reading = True
        path = self.path

        def read() -> tuple[tuple[int, int] | None, list[HostConfig]]:
            return stamp, list(self.loader(path)) if path.exists() else []

        run_in_pool(read, self._loaded, self._failed, self.pool)

    def _finish(self) -> None:
        self._reading = False
        if self._again:
            self._again = False
            self._debounce.start()

    def _failed(self, e: BaseException) -> None:
        self._stamp = self._file_stamp()
        text = self.tr("config.toml not applied: {error}").format(error=e)
        if text != self._last_error:
            self._last_error = text
            self.window.show_outcome(text, ok=False)
        self._finish()

    def _loaded(self, res: tuple[tuple[int, int] | None, list[HostConfig]]) -> None:
        stamp, hosts = res
        self._stamp = stamp
        self._last_error = ""
        try:
            self.apply(hosts)
        finally:
            self._finish()

    def apply(self, hosts: Sequence[HostConfig]) -> tuple[list[str], list[str], list[str]]:
        """Bring the fleet in line with the file's ``hosts``; → (added, changed, removed)."""
        in_fleet = {h.name: h for h in self.fleet.hosts()}
        wanted = {h.name: h for h in hosts}
        added, changed, removed = [], [], []
        for name in list(self.from_file):
            if name not in wanted and name in in_fleet:
                self.fleet.remove_host(name)
                self._rules_remove(name)
                removed.append(name)
            if name not in wanted:
                del self.from_file[name]
        for name, h in wanted.items():
            old = in_fleet.get(name)
            if old == h:
                self.from_file[name] = h
                continue
            if old is not None and name not in self.from_file:
                continue  # a demo host or group of that name: not the file's to change
            if old is not None:
                self.fleet.remove_host(name)
                changed.append(name)
            else:
                added.append(name)
            self.fleet.add_host(h)
            self._rules_set(h)
            self.from_file[name] = h
        if added or changed or removed:
            before = set(in_fleet)
            # Hosts the window shows beyond the fleet's (Prometheus groups) stay.
            extra = [h for n, h in self.window.hosts.items() if n not in before and n not in wanted]
            self.window.set_hosts([*self.fleet.hosts(), *extra])
            bits = []
            if added:
                bits.append(self.tr("added {names}").format(names=", ".join(added)))
            if changed:
                bits.append(self.tr("changed {names}").format(names=", ".join(changed)))
            if removed:
                bits.append(self.tr("removed {names}").format(names=", ".join(removed)))
            self.window.show_outcome(
                self.tr("config.toml changed: {what}").format(what="; ".join(bits))
            )
            self.hosts_changed.emit(added, changed, removed)
        return added, changed, removed

    def _rules_set(self, host: HostConfig) -> None:
        if self.rules is not None:
            self._on_rules_thread(partial(self.rules.set_host, host))

    def _rules_remove(self, name: str) -> None:
        if self.rules is not None:
            self._on_rules_thread(partial(self.rules.remove_host, name))

    def _on_rules_thread(self, call: Callable[[], None]) -> None:
        """The rule engine is the bridge's: a change to it runs there when there is one."""
        if self.bridge is not None:
            self.bridge.post(call)
        else:
            call()
