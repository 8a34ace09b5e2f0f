"""Translations: pick the language (the ``language`` setting, else the system locale) and
install Qt's translators before any window is built.

Every user-visible string of the GUI goes through Qt: ``self.tr`` in QObject subclasses,
``QCoreApplication.translate(context, text)`` elsewhere, and the core's catalogue, whose
strings are marked with ``QT_TRANSLATE_NOOP`` and translated through the hook installed here
(``catalogue.set_translator``). The messages live in ``resources/translations/*.ts``
(``tools/build_translations.py`` extracts them with pyside6-lupdate and compiles the ``.qm``
files with pyside6-lrelease); the ``.qm`` files ship as package data of ``gpufleet.resources``.

The command line stays English on purpose: its output is read by scripts and pasted into
bug reports.
"""

from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path

from PySide6.QtCore import (
    QCoreApplication,
    QLibraryInfo,
    QLocale,
    QTranslator,
)

from gpufleet.core.config.settings import load_settings
from gpufleet.core.text import catalogue
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP

log = logging.getLogger(__name__)

# Languages with a shipped translation; English is the source language.
SHIPPED = ("zh_CN",)

_installed: list[QTranslator] = []


def translations_dir() -> Path:
    """The folder holding the compiled ``gpufleet_<lang>.qm`` files (package data)."""
    return Path(str(resources.files("gpufleet.resources").joinpath("translations")))


def choose_language(setting: str | None = None, system: QLocale | None = None) -> str:
    """``"en"`` or a shipped language: the setting when it names one, else the system's."""
    if setting and setting != "system":
        return setting if setting in SHIPPED else "en"
    loc = system if system is not None else QLocale.system()
    name = loc.name()  # e.g. "zh_CN"
    if name in SHIPPED:
        return name
    # Simplified Chinese written in another region (Singapore, or a bare "zh") reads zh_CN.
    if (
        loc.language() == QLocale.Language.Chinese
        and loc.script() != QLocale.Script.TraditionalHanScript
    ):
        return "zh_CN"
    return "en"


def saved_language() -> str:
    """The ``language`` setting of config.toml ("system" when absent or unreadable)."""
    try:
        return load_settings()[0].language
    except Exception:  # no config yet, or a broken one: the app reports that elsewhere
        return "system"


def install(app: QCoreApplication, language: str | None = None) -> str:
    """Install the translators for ``language`` (default: the setting, else the system).

    Returns the language in use. Also sets the default QLocale, so numbers and dates that
    Qt formats follow the language, and hands ``QCoreApplication.translate`` to the core's
    catalogue. Safe to call again (the previous translators are removed first)."""
    lang = choose_language(saved_language() if language is None else language)
    for t in _installed:
        app.removeTranslator(t)
    _installed.clear()
    if lang != "en":
        ours = QTranslator(app)
        qm = translations_dir() / f"gpufleet_{lang}.qm"
        if ours.load(str(qm)):
            app.installTranslator(ours)
            _installed.append(ours)
        else:
            log.warning("translation %s not found: the interface stays in English", qm)
            lang = "en"
    if lang != "en":
        # Qt's own strings (standard buttons: OK, Cancel, Open, Close...).
        qt = QTranslator(app)
        qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
        if qt.load(f"qtbase_{lang}", qt_dir):
            app.installTranslator(qt)
            _installed.append(qt)
        QLocale.setDefault(QLocale(lang))
    catalogue.set_translator(QCoreApplication.translate if lang != "en" else None)
    return lang


def number(value: float, digits: int = 0) -> str:
    """``value`` with the current language's separators (QLocale default)."""
    return QLocale().toString(float(value), "f", digits)


# Words shown for states (the code keeps the English identifiers).
STATE_NAMES = {
    "ok": QT_TRANSLATE_NOOP("State", "ok"),
    "warning": QT_TRANSLATE_NOOP("State", "warning"),
    "critical": QT_TRANSLATE_NOOP("State", "critical"),
    "down": QT_TRANSLATE_NOOP("State", "down"),
    "waiting": QT_TRANSLATE_NOOP("State", "waiting"),
    "connecting": QT_TRANSLATE_NOOP("State", "connecting"),
    "deploying": QT_TRANSLATE_NOOP("State", "deploying"),
    "streaming": QT_TRANSLATE_NOOP("State", "streaming"),
    "reconnecting": QT_TRANSLATE_NOOP("State", "reconnecting"),
    "failed": QT_TRANSLATE_NOOP("State", "failed"),
    "stopped": QT_TRANSLATE_NOOP("State", "stopped"),
    "no_gpu": QT_TRANSLATE_NOOP("State", "no GPU"),
    "nvml_failed": QT_TRANSLATE_NOOP("State", "NVML failed"),
    "idle": QT_TRANSLATE_NOOP("State", "idle"),
}


def state_name(state: str) -> str:
    """A host, GPU or session state in the installed language."""
    text = STATE_NAMES.get(state)
    return QCoreApplication.translate("State", text) if text else state


session_state_name = state_name


# Why NVML does not report a metric: the sampler sends "Code: detail" (the NVML error name,
# then English detail such as the call or the board's limitation).
NVML_CODES = {
    "NotSupported": QT_TRANSLATE_NOOP("State", "not supported"),
    "NoPermission": QT_TRANSLATE_NOOP("State", "no permission"),
    "FunctionNotFound": QT_TRANSLATE_NOOP("State", "not in this driver"),
    "GpuIsLost": QT_TRANSLATE_NOOP("State", "GPU lost"),
    "Unknown": QT_TRANSLATE_NOOP("State", "unknown error"),
}


def unsupported_text(reason: str) -> str:
    """A "not reported" reason for display: in English as the sampler wrote it; in another
    language the error name translated, without the English detail."""
    code = reason.split(":", 1)[0].strip()
    source = NVML_CODES.get(code)
    if source is None:
        return reason
    text = QCoreApplication.translate("State", source)
    return reason if text == source else text
