"""Host management: add or edit a host (with "paste the SSH command"), test the connection,
import hosts from ``~/.ssh/config``.

Everything that touches the network, the disk or the keyring (test connection, saving the
config, storing a secret, reading ~/.ssh/config) runs in the QThreadPool; the dialog stays
responsive and shows the outcome in one line. Secrets go to the OS keyring only.
"""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QCoreApplication, Qt, QThreadPool, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gpufleet.core.config.configfile import load_config, save_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.secrets import set_secret
from gpufleet.core.cost.billing import BillingFileError, BillingState
from gpufleet.core.link.host_naming import suggest_name
from gpufleet.core.link.ssh_command import SshCommandError, parse_ssh
from gpufleet.core.link.ssh_config import default_path, importable_aliases, load, lookup
from gpufleet.core.providers import importing
from gpufleet.core.providers.base import ProviderError
from gpufleet.core.providers.import_billing import import_states, record_import_billing
from gpufleet.core.providers.registry import names, open_provider
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.core.text.sanitize import clean
from gpufleet.ui.background.detached import run_detached
from gpufleet.ui.background.worker import run_in_pool
from gpufleet.ui.dialogs.hostkey import HostKeyPrompt

# What a row of an import dialog stands for, and what saving one gives back.
Row = TypeVar("Row")
Saved = TypeVar("Saved")

AUTHS = ("auto", "agent", "key", "password")
COLLECTORS = ("auto", "sampler", "nvidia-smi")
# What the Authentication combo shows for each (the value saved is the key).
AUTH_LABELS = {
    "auto": QT_TRANSLATE_NOOP("HostDialog", "auto"),
    "agent": QT_TRANSLATE_NOOP("HostDialog", "agent"),
    "key": QT_TRANSLATE_NOOP("HostDialog", "key"),
    "password": QT_TRANSLATE_NOOP("HostDialog", "password"),
}


def save_host(cfg: HostConfig, old_name: str | None, secret: str | None) -> HostConfig:
    """Add or replace the host in config.toml and store its secret in the keyring
    (blocking: run it in the pool)."""
    app = load_config()
    names = [h.name for h in app.hosts]
    if cfg.name != old_name and cfg.name in names:
        raise ValueError(
            QCoreApplication.translate("HostDialog", "a host named {name} already exists").format(
                name=repr(cfg.name)
            )
        )
    if old_name is not None and old_name in names:
        app.hosts[names.index(old_name)] = cfg
    else:
        app.hosts.append(cfg)
    save_config(app)
    if secret:
        kind = "password" if cfg.auth == "password" else "key-passphrase"
        set_secret(cfg.name, kind, secret)  # type: ignore[arg-type]
    return cfg


def test_connection(cfg: HostConfig, prompt: HostKeyPrompt) -> str:
    """Open SSH, run python3 and nvidia-smi; a one-line summary (blocking: pool only)."""
    # paramiko takes ~110 ms to import; only Test connection needs it here.
    from gpufleet.core.link.ssh import SshConnection

    conn = SshConnection.open(cfg, on_unknown_key=prompt.ask, connect_timeout=10.0)
    try:
        rc, out, _ = conn.run(
            "python3 -c 'import sys; print(sys.version.split()[0])'; "
            "nvidia-smi -L 2>/dev/null | wc -l",
            timeout=30.0,
        )
    finally:
        conn.close()
    lines = out.decode(errors="replace").split()
    py = lines[0] if lines else "?"
    gpus = lines[1] if len(lines) > 1 else "?"
    if rc != 0 and not lines:
        return QCoreApplication.translate(
            "HostDialog", "connected, but the test command failed: is python3 installed there?"
        )
    return QCoreApplication.translate(
        "HostDialog", "connected: python3 {py}, {gpus} GPU(s) listed by nvidia-smi"
    ).format(py=py, gpus=gpus)


class HostDialog(QDialog):
    saved = Signal(object, object)  # HostConfig, old name (None when added)

    def __init__(self, parent: QWidget | None, host: HostConfig | None, pool: QThreadPool) -> None:
        super().__init__(parent)
        self.pool = pool
        self.old = host
        self._suggested = ""  # the name Fill in gave, replaced by the next paste's
        self.prompt = HostKeyPrompt()
        self.prompt.parent_widget = self
        self.setWindowTitle(
            self.tr("Edit {name}").format(name=host.name) if host else self.tr("Add a host")
        )
        lay = QVBoxLayout(self)
        paste = QHBoxLayout()
        self.paste = QLineEdit()
        self.paste.setPlaceholderText(
            self.tr("Paste the SSH command, e.g. ssh -p 40022 root@203.0.113.7")
        )
        self.paste.returnPressed.connect(self.fill_from_command)
        fill = QPushButton(self.tr("Fill in"))
        fill.clicked.connect(self.fill_from_command)
        paste.addWidget(self.paste, 1)
        paste.addWidget(fill)
        lay.addLayout(paste)
        form = QFormLayout()
        self.name = QLineEdit()
        self.host = QLineEdit()
        self.port = QSpinBox()
        self.port.setRange(1, 65535)
        self.port.setValue(22)
        self.user = QLineEdit()
        self.auth = QComboBox()
        for a in AUTHS:
            self.auth.addItem(QCoreApplication.translate("HostDialog", AUTH_LABELS[a]), a)
        key_row = QHBoxLayout()
        self.key = QLineEdit()
        browse = QPushButton("…")
        browse.clicked.connect(self._browse)
        key_row.addWidget(self.key, 1)
        key_row.addWidget(browse)
        self.jump = QLineEdit()
        self.jump.setPlaceholderText(self.tr("optional: user@bastion:port"))
        self.secret = QLineEdit()
        self.secret.setEchoMode(QLineEdit.EchoMode.Password)
        self.secret.setPlaceholderText(
            self.tr("password or key passphrase: kept in the OS keyring only")
        )
        self.price = QDoubleSpinBox()
        self.price.setRange(0, 10_000)
        self.price.setDecimals(3)
        self.price.setSpecialValueText(self.tr("not set"))
        self.currency = QLineEdit("USD")
        self.currency.setMaxLength(3)
        # What reads the GPUs there: nvidia-smi for images without python3 >= 3.8.
        self.collector = QComboBox()
        self.collector.addItems(COLLECTORS)
        self.collector.setToolTip(
            self.tr(
                "auto: the sampler, or nvidia-smi when the host has no python3 >= 3.8. "
                "nvidia-smi records nothing while the laptop is away and cannot kill safely."
            )
        )
        for label, w in (
            (self.tr("Name"), self.name),
            (self.tr("Host"), self.host),
            (self.tr("Port"), self.port),
            (self.tr("User"), self.user),
            (self.tr("Authentication"), self.auth),
            (self.tr("Key file"), key_row),
            (self.tr("Jump host"), self.jump),
            (self.tr("Secret"), self.secret),
            (self.tr("Price per hour"), self.price),
            (self.tr("Currency"), self.currency),
            (self.tr("Read GPUs with"), self.collector),
        ):
            form.addRow(label, w)
        lay.addLayout(form)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.test_button = buttons.addButton(
            self.tr("Test connection"), QDialogButtonBox.ButtonRole.ActionRole
        )
        self.test_button.clicked.connect(self.test)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        lay.addWidget(buttons)
        if host is not None:
            self._load(host)

    def _load(self, h: HostConfig) -> None:
        self.name.setText(h.name)
        self.host.setText(h.host)
        self.port.setValue(h.port)
        self.user.setText(h.user or "")
        self.auth.setCurrentIndex(max(0, self.auth.findData(h.auth)))
        self.key.setText(h.key_path or "")
        self.jump.setText(h.jump or "")
        self.price.setValue(h.price_per_hour or 0.0)
        self.currency.setText(h.currency)
        self.collector.setCurrentText(h.collector)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("SSH key"), str(Path.home() / ".ssh"))
        if path:
            self.key.setText(path)

    def fill_from_command(self) -> None:
        try:
            parsed = parse_ssh(self.paste.text())
        except SshCommandError as e:
            self._say(html.escape(e.localized()), ok=False)
            return
        d = parsed.as_dict()
        # A clean form: nothing of an earlier paste (its key file, its jump host) stays.
        self.host.setText(str(d.get("host") or ""))
        self.port.setValue(int(d.get("port") or 22))
        self.user.setText(str(d.get("user") or ""))
        self.key.setText(str(d.get("key_path") or ""))
        self.auth.setCurrentIndex(self.auth.findData("key" if d.get("key_path") else "auto"))
        self.jump.setText(str(d.get("jump") or ""))
        # The name too, unless the user typed one (or it is the host being edited).
        if self.old is None and self.name.text() in ("", self._suggested):
            self._suggested = suggest_name(self.host.text(), self.port.value(), self.user.text())
            self.name.setText(self._suggested)
        said = self.tr("filled in from the command: check, then save")
        if parsed.ignored:
            what = html.escape(", ".join(parsed.ignored))
            said += "<br>" + self.tr(
                "ignored (does not change which machine is reached): {what}"
            ).format(what=what)
        self._say(said, ok=True)

    def config(self) -> HostConfig:
        name = self.name.text().strip()
        if not name:
            raise ValueError(self.tr("give the host a name"))
        if not self.host.text().strip():
            raise ValueError(self.tr("the host's address is missing"))
        base = self.old or HostConfig(name=name)
        return dataclasses.replace(
            base,
            name=name,
            host=self.host.text().strip(),
            port=self.port.value(),
            user=self.user.text().strip() or None,
            auth=str(self.auth.currentData() or "auto"),  # type: ignore[arg-type]
            key_path=self.key.text().strip() or None,
            jump=self.jump.text().strip() or None,
            transport="ssh" if base.transport == "ssh" else base.transport,
            price_per_hour=self.price.value() or None,
            currency=self.currency.text().strip().upper() or "USD",
            collector=self.collector.currentText(),  # type: ignore[arg-type]
        )

    def _say(self, text: str, ok: bool) -> None:
        colour = "#3fb950" if ok else "#f85149"
        self.status.setText(f'<span style="color:{colour}">{text}</span>')

    def test(self) -> None:
        try:
            cfg = self.config()
        except ValueError as e:
            self._say(str(e), ok=False)
            return
        self.test_button.setEnabled(False)
        self._say(self.tr("connecting to {host}…").format(host=cfg.label), ok=True)
        prompt = self.prompt

        def done(text: Any) -> None:
            self.test_button.setEnabled(True)
            self._say(str(text), ok=True)

        def failed(e: BaseException) -> None:
            self.test_button.setEnabled(True)
            self._say(f"{type(e).__name__}: {e}", ok=False)

        run_in_pool(lambda: test_connection(cfg, prompt), done, failed, self.pool)

    def save(self) -> None:
        try:
            cfg = self.config()
        except ValueError as e:
            self._say(str(e), ok=False)
            return
        self.save_button.setEnabled(False)
        old = self.old.name if self.old else None
        secret = self.secret.text() or None

        def done(saved: Any) -> None:
            self.saved.emit(saved, old)
            self.accept()

        def failed(e: BaseException) -> None:
            self.save_button.setEnabled(True)
            self._say(str(e), ok=False)

        run_in_pool(lambda: save_host(cfg, old, secret), done, failed, self.pool)


class _ChecklistImport(QDialog, Generic[Row, Saved]):
    """What both import dialogs share: a list of checkable rows (one per ``Row``), a status
    line and Import / Cancel. Import saves the checked rows in the pool (``_save``), emits
    ``imported`` with what that returned and closes; a failure is said in the status line.

    Subclasses lay the widgets out and give them their words: their ``tr`` strings keep the
    subclass's translation context, which the existing translations are filed under."""

    imported = Signal(object)  # list[Saved]

    def __init__(self, parent: QWidget | None, pool: QThreadPool | None) -> None:
        super().__init__(parent)
        self.pool = pool or QThreadPool.globalInstance()
        self.rows: list[Row] = []  # what each list row stands for, in row order
        self.list = QListWidget()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setEnabled(False)
        self.buttons.accepted.connect(self._import)
        self.buttons.rejected.connect(self.reject)

    def _clear_rows(self) -> None:
        self.list.clear()
        self.rows = []

    def _add_row(self, text: str, row: Row, *, checked: bool = True, enabled: bool = True) -> None:
        item = QListWidgetItem(text)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        if not enabled:
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
        self.list.addItem(item)
        self.rows.append(row)

    def checked(self) -> list[Row]:
        return [
            r
            for i, r in enumerate(self.rows)
            if self.list.item(i).checkState() == Qt.CheckState.Checked
        ]

    def _save(self, chosen: list[Row]) -> list[Saved]:
        """Saves the chosen rows (blocking: runs in the pool)."""
        raise NotImplementedError

    def _import(self) -> None:
        chosen = self.checked()
        if not chosen:
            self.reject()
            return
        self.ok.setEnabled(False)

        def done(saved: Any) -> None:
            self.imported.emit(list(saved))
            self.accept()

        def failed(e: BaseException) -> None:
            self.ok.setEnabled(True)
            self.status.setText(str(e))

        run_in_pool(lambda: self._save(chosen), done, failed, self.pool)


class ImportDialog(_ChecklistImport[HostConfig, HostConfig]):
    """Pick aliases from ~/.ssh/config (Include honoured by the core) to add as hosts."""

    def __init__(
        self,
        parent: QWidget | None,
        existing: set[str],
        ssh_config: Path | None = None,
        pool: QThreadPool | None = None,
    ) -> None:
        super().__init__(parent, pool)
        self.existing = existing
        self.path = ssh_config
        self.setWindowTitle(self.tr("Import hosts from ~/.ssh/config"))
        lay = QVBoxLayout(self)
        lay.addWidget(self.list, 1)
        self.status.setText(self.tr("reading ~/.ssh/config…"))
        lay.addWidget(self.status)
        self.ok.setText(self.tr("Import"))
        lay.addWidget(self.buttons)
        run_in_pool(self._read, self._show, self._failed, self.pool)

    def _read(self) -> tuple[bool, list[HostConfig]]:
        """(whether the file exists, the hosts it names)."""
        if not (self.path or default_path()).exists():
            return False, []
        cfg = load(self.path)
        out = []
        for alias in importable_aliases(self.path):
            out.append(lookup(alias, self.path, cfg).host_config())
        return True, out

    def _show(self, read: Any) -> None:
        exists, hosts = read
        for h in hosts:
            known = h.name in self.existing
            text = self.tr("{host} — already added").format(host=h.label) if known else h.label
            self._add_row(text, h, checked=not known, enabled=not known)
        path = str(self.path or default_path())
        if self.rows:
            text = self.tr("{n} host aliases found").format(n=len(self.rows))
        elif not exists:
            text = self.tr(
                "{path} does not exist: there is no ssh config to import from. Add the host "
                "with Hosts ▸ Add host… (paste its ssh command) instead."
            ).format(path=path)
        else:
            text = self.tr("{path} has no Host entries to import").format(path=path)
        self.status.setText(text)
        self.ok.setEnabled(bool(self.rows))

    def _failed(self, e: BaseException) -> None:
        self.status.setText(str(e))

    def _save(self, chosen: list[HostConfig]) -> list[HostConfig]:
        return [save_host(h, None, None) for h in chosen]


class ProviderImportDialog(_ChecklistImport[importing.Change, tuple[HostConfig, str | None]]):
    """Add or update hosts from a provider account (vast.ai, RunPod, Lambda) through its
    API (``gpufleet.core.providers``): the changes are listed first, checked ones applied.
    ``imported`` carries (saved host, its old name or None) for each."""

    def __init__(
        self,
        parent: QWidget | None,
        existing: list[HostConfig],
        pool: QThreadPool | None = None,
        api_url: str | None = None,
    ) -> None:
        super().__init__(parent, pool)
        self.existing = list(existing)
        self.api_url = api_url
        self.changes: list[importing.Change] = []
        # After Import: host -> the billing state the provider gave it (recorded in
        # billing.json as `gpufleet hosts import` does), for the app to follow.
        self.billing: dict[str, BillingState] = {}
        self.billing_note: str | None = None
        self.setWindowTitle(self.tr("Import hosts from a provider"))
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        self.provider = QComboBox()
        self.provider.addItems(names())
        self.list_button = QPushButton(self.tr("List instances"))
        self.list_button.clicked.connect(self.fetch)
        row.addWidget(self.provider, 1)
        row.addWidget(self.list_button)
        lay.addLayout(row)
        lay.addWidget(self.list, 1)
        self.status.setText(
            self.tr(
                "The API key comes from VAST_API_KEY / RUNPOD_API_KEY / LAMBDA_API_KEY or "
                "`gpufleet providers login NAME` (OS keyring)."
            )
        )
        lay.addWidget(self.status)
        self.ok.setText(self.tr("Import"))
        lay.addWidget(self.buttons)

    def fetch(self) -> None:
        name, url, existing = self.provider.currentText(), self.api_url, self.existing
        self.list_button.setEnabled(False)
        self.status.setText(self.tr("asking {provider}…").format(provider=name))

        def work() -> list[importing.Change]:
            return importing.plan(existing, open_provider(name, url).list_instances())

        run_detached(work, self._show, self._failed)  # never held by the app's quit

    def _show(self, changes: Any) -> None:
        self.list_button.setEnabled(True)
        self._clear_rows()
        self.changes = list(changes)
        for c in changes:
            if c.kind not in ("add", "update"):
                continue
            inst = c.instance
            if c.kind == "add":
                text = self.tr("add {name}: {ssh}, {price}").format(
                    name=c.host.name,
                    ssh=clean(inst.ssh_command or "-"),
                    price=f"{inst.price_per_hour:g} {inst.currency}/h"
                    if inst.price_per_hour is not None
                    else "—",
                )
            else:
                text = self.tr("update {name}: {fields}").format(
                    name=c.host.name, fields=", ".join(c.fields)
                )
            self._add_row(text, c)
        other = len(changes) - len(self.rows)
        text = self.tr("{n} change(s); {other} instance(s) unchanged or without SSH").format(
            n=len(self.rows), other=other
        )
        for c in changes:
            if c.kind == "invalid":
                text += "\n" + self.tr("skipped instance {id}: {why}").format(
                    id=clean(c.instance.id), why=clean(c.problem)
                )
        self.status.setText(text)
        self.ok.setEnabled(bool(self.rows))

    def _failed(self, e: BaseException) -> None:
        self.list_button.setEnabled(True)
        text = clean(str(e))
        if isinstance(e, ProviderError) and e.kind == "api_changed":
            # Not a key or an outage: say what helps (an update), then what it said.
            text = self.tr(
                "The provider's API changed and this version of gpufleet cannot read it: "
                "update gpufleet. ({detail})"
            ).format(detail=text)
        self.status.setText(text)

    def _save(self, chosen: list[importing.Change]) -> list[tuple[HostConfig, str | None]]:
        out = []
        for c in chosen:
            assert c.host is not None  # only "add" and "update" changes are listed
            old = c.before.name if c.before is not None else None
            out.append((save_host(c.host, old, None), old))
        # The billing of what was imported and of the hosts already here (a pod stopped
        # since, an instance gone), not of instances left unchecked.
        ids = {id(c) for c in chosen}
        known = [c for c in self.changes if id(c) in ids or c.before is not None]
        try:
            self.billing = record_import_billing(known)
        except BillingFileError as e:
            self.billing = import_states(known)
            self.billing_note = str(e)
        return out
