"""Passwords and key passphrases, kept only in the OS keyring (``keyring``).

Entries live under the service ``gpufleet`` with usernames ``<host>:password`` and
``<host>:key-passphrase``. Nothing here logs a secret or puts one into an exception: errors
say which entry and what to do, never the value.

When there is no usable keyring (a headless Linux without a Secret Service, a locked keyring
that cannot be unlocked without a prompt) every call raises ``SecretStoreUnavailable`` with a
plain message; callers then fall back to ssh-agent or ask each time. A plaintext backend
(``keyrings.alt``) is refused outright: once installed it silently becomes the default and
writes secrets to disk.
"""

from __future__ import annotations

import logging
from typing import Literal, get_args

import keyring
import keyring.errors

log = logging.getLogger(__name__)

SERVICE = "gpufleet"
# webhook-url: core.notify; token: Prometheus bearer tokens and the Alertmanager receiver's
# shared token (core.promsource, core.am_receiver); api-key: a rental provider's account key
# (core.providers, under the name ``provider/<name>``, which no host name can take)
SecretKind = Literal["password", "key-passphrase", "webhook-url", "token", "api-key"]
SECRET_KINDS: tuple[str, ...] = get_args(SecretKind)

_ADVICE = (
    "unlock your desktop keyring (e.g. log in to the desktop session, or run "
    "`gnome-keyring-daemon --unlock`), or use ssh-agent (`ssh-add KEY`) instead of a stored "
    "secret"
)


_NO_KEYRING_ADVICE = (
    "start a Secret Service (gnome-keyring, KWallet or KeePassXC) in your desktop session, "
    "or use ssh-agent (`ssh-add KEY`) instead of a stored secret"
)


class SecretStoreUnavailable(Exception):
    """No usable OS keyring; the message says why and what to do (never a secret).

    ``reason``: "no_keyring" (no backend at all), "locked", "plaintext" (refused backend) or
    "failed".
    """

    def __init__(self, message: str, reason: str = "failed") -> None:
        super().__init__(message)
        self.reason = reason


def username(host_name: str, kind: str) -> str:
    if kind not in SECRET_KINDS:
        raise ValueError(f"unknown secret kind {kind!r}: use one of {', '.join(SECRET_KINDS)}")
    return f"{host_name}:{kind}"


def _backend() -> keyring.backend.KeyringBackend:
    backend = keyring.get_keyring()
    module = type(backend).__module__
    if module.startswith("keyrings.alt"):
        raise SecretStoreUnavailable(
            f"the keyring backend {module} stores secrets in plain files; gpufleet refuses it: "
            "uninstall keyrings.alt, then " + _ADVICE,
            "plaintext",
        )
    return backend


def _unavailable(action: str, e: BaseException, with_detail: bool = True) -> SecretStoreUnavailable:
    if isinstance(e, keyring.errors.NoKeyringError):
        return SecretStoreUnavailable(
            f"cannot {action}: no OS keyring (Secret Service) is available; " + _NO_KEYRING_ADVICE,
            "no_keyring",
        )
    if isinstance(e, keyring.errors.KeyringLocked):
        return SecretStoreUnavailable(
            f"cannot {action}: the keyring is locked; {_ADVICE}", "locked"
        )
    else:
        # The backend's own text (a D-Bus error, say) never contains our secret; it is left
        # out of `set` anyway, where the secret was in flight.
        detail = f": {e}" if with_detail and str(e) else ""
        why = f"the keyring failed ({type(e).__name__}{detail})"
    return SecretStoreUnavailable(f"cannot {action}: {why}; {_ADVICE}")


def get_secret(host_name: str, kind: SecretKind) -> str | None:
    """The stored secret, or None when there is none."""
    user = username(host_name, kind)
    try:
        value = _backend().get_password(SERVICE, user)
    except SecretStoreUnavailable:
        raise
    except Exception as e:
        raise _unavailable(f"read the {kind} of host {host_name!r}", e) from None
    log.debug("keyring lookup %s: %s", user, "found" if value is not None else "absent")
    return value


def set_secret(host_name: str, kind: SecretKind, value: str) -> None:
    user = username(host_name, kind)
    if not value:
        raise ValueError(f"refusing to store an empty {kind} for host {host_name!r}")
    try:
        _backend().set_password(SERVICE, user, value)
    except SecretStoreUnavailable:
        raise
    except Exception as e:
        raise _unavailable(f"store the {kind} of host {host_name!r}", e, False) from None
    log.debug("keyring stored %s", user)


def delete_secret(host_name: str, kind: SecretKind) -> bool:
    """Delete one entry; False when there was none."""
    user = username(host_name, kind)
    try:
        backend = _backend()
        if backend.get_password(SERVICE, user) is None:
            return False
        backend.delete_password(SERVICE, user)
    except SecretStoreUnavailable:
        raise
    except keyring.errors.PasswordDeleteError:
        return False
    except Exception as e:
        raise _unavailable(f"delete the {kind} of host {host_name!r}", e) from None
    return True


def delete_all(host_name: str) -> list[str]:
    """Delete every secret of a host (on `hosts remove`); the kinds that were deleted."""
    return [k for k in SECRET_KINDS if delete_secret(host_name, k)]  # type: ignore[arg-type]


def store_available() -> str | None:
    """None when the keyring works, else the reason (for tests and `gpufleet check`)."""
    try:
        _backend().get_password(SERVICE, "__probe__")
    except SecretStoreUnavailable as e:
        return str(e)
    except Exception as e:
        return str(_unavailable("use the keyring", e))
    return None
