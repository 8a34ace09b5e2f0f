"""Settings ▸ Providers: the rental providers' API keys, entered, tested and removed in the
window (what ``gpufleet providers login NAME`` does on the command line).

A key goes to the OS keyring at once (``core/providers/credentials``, never config.toml);
the provider's environment variable, when set, still wins, and the row says so. "Test" asks
the provider for the account's instances with the typed key (or, with none typed, the key
gpufleet would use) and says how many it lists, or why not. The keyring is read when the
tab is first shown, off the GUI thread, not when the dialog opens: opening Settings never
prompts for a keyring.
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpufleet.core.config.secrets import SecretStoreUnavailable, get_secret
from gpufleet.core.providers import credentials
from gpufleet.core.providers.base import ProviderError
from gpufleet.core.providers.registry import PROVIDERS, open_provider
from gpufleet.core.text.sanitize import clean
from gpufleet.ui.background.worker import run_in_pool

# What each provider is called in the window (its adapter's own label).
LABELS: dict[str, str] = {name: str(getattr(f, "label", name)) for name, f in PROVIDERS.items()}


def stored_state(name: str) -> str:
    """ "env", "stored", "none", or the keyring's problem (blocking: run in the pool)."""
    if os.environ.get(credentials.ENV_VARS[name], "").strip():
        return "env"
    try:
        found = get_secret(credentials.keyring_name(name), "api-key")
    except SecretStoreUnavailable as e:
        return f"unavailable:{e}"
    return "stored" if found else "none"


def test_key(name: str, typed: str | None) -> int:
    """How many instances the account lists with this key (blocking)."""
    return len(open_provider(name, key=typed or None).list_instances())


class _Row:
    """One provider's widgets."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.status = QLabel("…")
        self.status.setWordWrap(True)
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.save = QPushButton()
        self.test = QPushButton()
        self.remove = QPushButton()
        self.outcome = QLabel()
        self.outcome.setWordWrap(True)


class ProviderKeysTab(QWidget):
    """The Providers tab of the settings dialog."""

    def __init__(self, parent: QWidget | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self.pool = pool or QThreadPool.globalInstance()
        self.rows: dict[str, _Row] = {}
        self._read = False
        lay = QVBoxLayout(self)
        grid = QGridLayout()
        for i, name in enumerate(PROVIDERS):
            row = self.rows[name] = _Row(name)
            row.key.setPlaceholderText(self.tr("paste the {provider} API key").format(
                provider=LABELS[name]))  # fmt: skip
            row.save.setText(self.tr("Save key"))
            row.test.setText(self.tr("Test"))
            row.remove.setText(self.tr("Remove"))
            row.save.clicked.connect(lambda _c=False, n=name: self.save_key(n))
            row.test.clicked.connect(lambda _c=False, n=name: self.test_key(n))
            row.remove.clicked.connect(lambda _c=False, n=name: self.remove_key(n))
            r = 3 * i
            grid.addWidget(QLabel(f"<b>{LABELS[name]}</b>"), r, 0)
            grid.addWidget(row.status, r, 1, 1, 4)
            grid.addWidget(row.key, r + 1, 1)
            grid.addWidget(row.save, r + 1, 2)
            grid.addWidget(row.test, r + 1, 3)
            grid.addWidget(row.remove, r + 1, 4)
            grid.addWidget(row.outcome, r + 2, 1, 1, 4)
        grid.setColumnStretch(1, 1)
        lay.addLayout(grid)
        hint = QLabel(
            self.tr(
                "Keys are kept in the OS keyring, never in the config file, and saved at once. "
                "An environment variable (VAST_API_KEY, RUNPOD_API_KEY, LAMBDA_API_KEY) wins "
                "over a stored key."
            )
        )
        hint.setWordWrap(True)
        lay.addWidget(hint)
        lay.addStretch(1)

    # -- status ----------------------------------------------------------------------------

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if not self._read:
            self._read = True
            self.refresh()

    def refresh(self, only: str | None = None) -> None:
        """Read where each key comes from (off the GUI thread) and say it."""
        for name in [only] if only else list(self.rows):
            self._read_state(name)

    def _read_state(self, name: str) -> None:
        def failed(e: BaseException) -> None:
            self._show_state(name, f"unavailable:{e}")

        run_in_pool(
            lambda: stored_state(name),
            lambda st: self._show_state(name, str(st)),
            failed,
            self.pool,
        )

    def _show_state(self, name: str, state: str) -> None:
        row = self.rows[name]
        var = credentials.ENV_VARS[name]
        if state == "env":
            text = self.tr("from {var} (the environment variable wins over a stored key)")
        elif state == "stored":
            text = self.tr("stored in the keyring")
        elif state == "none":
            text = self.tr("no key: paste one and Save key, or set {var}")
        else:
            text = self.tr("the keyring cannot be read: {why}").format(
                why=clean(state.removeprefix("unavailable:")), var=var
            )
        row.status.setText(text.format(var=var))
        row.remove.setEnabled(state == "stored")

    def _say(self, name: str, text: str, ok: bool) -> None:
        colour = "#3fb950" if ok else "#f85149"
        self.rows[name].outcome.setText(f'<span style="color:{colour}">{text}</span>')

    # -- actions ---------------------------------------------------------------------------

    def save_key(self, name: str) -> None:
        row = self.rows[name]
        value = row.key.text().strip()
        if not value:
            self._say(name, self.tr("paste a key first"), False)
            return

        def done(_r: Any) -> None:
            row.key.clear()
            self._say(name, self.tr("saved in the keyring"), True)
            self.refresh(name)

        run_in_pool(
            lambda: credentials.store_key(name, value),
            done,
            lambda e: self._say(name, clean(str(e)), False),
            self.pool,
        )

    def test_key(self, name: str) -> None:
        row = self.rows[name]
        typed = row.key.text().strip() or None
        row.test.setEnabled(False)
        self._say(name, self.tr("asking {provider}…").format(provider=LABELS[name]), True)

        def done(n: Any) -> None:
            row.test.setEnabled(True)
            self._say(
                name,
                self.tr("the key works: {n} instance(s) in the account").format(n=n),
                True,
            )

        def failed(e: BaseException) -> None:
            row.test.setEnabled(True)
            text = clean(str(e)) if isinstance(e, ProviderError) else f"{type(e).__name__}: {e}"
            self._say(name, text, False)

        run_in_pool(lambda: test_key(name, typed), done, failed, self.pool)

    def remove_key(self, name: str) -> None:
        def done(removed: Any) -> None:
            self._say(
                name,
                self.tr("removed from the keyring") if removed else self.tr("no key was stored"),
                True,
            )
            self.refresh(name)

        run_in_pool(
            lambda: credentials.delete_key(name),
            done,
            lambda e: self._say(name, clean(str(e)), False),
            self.pool,
        )
