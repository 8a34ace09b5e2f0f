"""The keyring wrapper, against a real Secret Service (gnome-keyring under tools/run-tests).

Plain ``pytest`` has no private Secret Service: the round-trip tests then skip with the
reason (they never touch a developer's own keyring). The failure paths run everywhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator

import keyring
import keyring.backend
import keyring.errors
import pytest
from gpufleet.core.config import secrets
from keyring.backends import fail
from keyring.compat import properties

from tests.support.paths import ROOT


@pytest.fixture
def swap_backend() -> Iterator[object]:
    old = keyring.get_keyring()
    yield keyring.set_keyring
    keyring.set_keyring(old)


def test_round_trip_in_the_real_secret_service(secret_service):
    host = f"h-{uuid.uuid4().hex[:8]}"
    value = f"s3cret-{uuid.uuid4().hex}"
    assert secrets.get_secret(host, "password") is None
    secrets.set_secret(host, "password", value)
    secrets.set_secret(host, "key-passphrase", value + "-pp")
    assert secrets.get_secret(host, "password") == value
    # Stored where other tools can find it: service "gpufleet", user "<host>:<kind>".
    assert keyring.get_password("gpufleet", f"{host}:key-passphrase") == value + "-pp"
    assert type(keyring.get_keyring()).__module__ == "keyring.backends.SecretService"
    assert secrets.delete_secret(host, "password") is True
    assert secrets.delete_secret(host, "password") is False
    assert secrets.delete_all(host) == ["key-passphrase"]
    assert secrets.get_secret(host, "key-passphrase") is None


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown secret kind"):
        secrets.get_secret("h", "no-such-kind")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        secrets.set_secret("h", "password", "")


def test_no_keyring_says_what_to_do(swap_backend):
    swap_backend(fail.Keyring())
    for call in (
        lambda: secrets.get_secret("h", "password"),
        lambda: secrets.set_secret("h", "password", "hunter2-secret"),
        lambda: secrets.delete_secret("h", "password"),
    ):
        with pytest.raises(secrets.SecretStoreUnavailable) as ei:
            call()
        msg = str(ei.value)
        assert ei.value.reason == "no_keyring"
        assert "no OS keyring" in msg and "ssh-agent" in msg and "'h'" in msg
        assert "hunter2-secret" not in msg
        assert ei.value.__cause__ is None and ei.value.__suppress_context__
    assert "no OS keyring" in (secrets.store_available() or "")


@properties.classproperty
def _not_viable(cls: type) -> float:
    # keyring discovers every KeyringBackend subclass: these stand-ins must never be picked
    # (set_keyring() installs them explicitly, without asking their priority).
    raise RuntimeError("test stand-in")


class _PlaintextKeyring(keyring.backend.KeyringBackend):
    """Stands in for keyrings.alt (never installed): only its module name matters."""

    priority = _not_viable

    def get_password(self, service: str, username: str) -> str | None:
        raise AssertionError("must not be used")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise AssertionError("must not be used")

    def delete_password(self, service: str, username: str) -> None:
        raise AssertionError("must not be used")


_PlaintextKeyring.__module__ = "keyrings.alt.file"


def test_plaintext_backend_is_refused(swap_backend):
    swap_backend(_PlaintextKeyring())
    with pytest.raises(secrets.SecretStoreUnavailable) as ei:
        secrets.set_secret("h", "password", "x-secret")
    assert ei.value.reason == "plaintext"
    assert "plain files" in str(ei.value)


class _BrokenKeyring(keyring.backend.KeyringBackend):
    priority = _not_viable

    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringError("D-Bus said no")

    def set_password(self, service: str, username: str, password: str) -> None:
        # A backend that (wrongly) quotes what it was given must not leak it through us.
        raise keyring.errors.PasswordSetError(f"cannot store {password}")

    def delete_password(self, service: str, username: str) -> None:
        raise keyring.errors.KeyringError("D-Bus said no")


def test_backend_errors_never_carry_the_secret(swap_backend):
    swap_backend(_BrokenKeyring())
    with pytest.raises(secrets.SecretStoreUnavailable) as ei:
        secrets.set_secret("h", "password", "leaky-secret-value")
    assert "leaky-secret-value" not in str(ei.value)
    assert ei.value.__cause__ is None and ei.value.__suppress_context__
    with pytest.raises(secrets.SecretStoreUnavailable, match="D-Bus said no"):
        secrets.get_secret("h", "password")


_LOCKED_SCRIPT = """
import secretstorage
from gpufleet.core.config import secrets
secrets.set_secret("h", "password", "locked-away-secret")
conn = secretstorage.dbus_init()
secretstorage.get_default_collection(conn).lock()
try:
    secrets.get_secret("h", "password")
except secrets.SecretStoreUnavailable as e:
    print("REASON", e.reason)
    print("MESSAGE", e)
"""


def test_a_locked_keyring_gives_a_plain_message():
    # Locking cannot be undone without a prompt, so this runs in a Secret Service of its own.
    if not (shutil.which("dbus-run-session") and shutil.which("gnome-keyring-daemon")):
        pytest.skip("needs dbus-run-session and gnome-keyring-daemon")
    proc = subprocess.run(
        [str(ROOT / "tools" / "run-tests"), sys.executable, "-c", _LOCKED_SCRIPT],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT / "gui")},
    )
    assert "REASON locked" in proc.stdout, proc.stdout + proc.stderr
    assert "unlock" in proc.stdout and "ssh-agent" in proc.stdout
    assert "locked-away-secret" not in proc.stdout + proc.stderr
