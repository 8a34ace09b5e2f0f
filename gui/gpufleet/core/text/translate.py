"""The marker and the hook every sentence of gpufleet goes through.

Strings are marked for Qt's ``lupdate`` with ``QT_TRANSLATE_NOOP(context, text)`` (lupdate
recognises the call in .py files) without importing Qt: the marker returns the text, and
``translated`` translates it through a hook the UI sets at startup
(``set_translator(QCoreApplication.translate)``). Placeholders are ``{name}`` fields filled
with ``str.format``; a translation must keep them. Kept apart from the sentences so that each
wording module (format, alerts, findings, cost, reasons) shares the one installed translator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gpufleet.core.text.sanitize import clean

Translator = Callable[[str, str], str]
_translator: Translator | None = None


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:
    """Marks ``text`` for lupdate under ``context``; returns it unchanged."""
    return text


def set_translator(fn: Translator | None) -> None:
    """Install the translation function (``QCoreApplication.translate`` in the GUI)."""
    global _translator
    _translator = fn


def translated(context: str, text: str) -> str:
    """``text`` (marked under ``context``) in the installed language; the text itself
    when no translator is set or it has no translation. Not named ``tr``: lupdate would
    take every ``tr(context, ...)`` call for a message whose source is the context."""
    fn = _translator
    if fn is None:
        return text
    try:
        out = fn(context, text)
    except Exception:  # a broken translation must never hide an alert
        return text
    return out if isinstance(out, str) and out else text


tr = translated  # the former name, kept for callers


def join_sentences(parts: list[str]) -> str:
    """Sentences one after the other: a space after Latin punctuation, none after a CJK
    full stop (a translation into Chinese reads "。它" not "。 它")."""
    out = ""
    for p in (p.strip() for p in parts):
        if not p:
            continue
        out += p if not out or out[-1] in "。！？；：）」" else " " + p
    return out


class Values(dict[str, Any]):
    """format_map source: a missing placeholder shows as "?" rather than raising. String
    values (process names, command lines, GPU names, messages: many come from the instance)
    are shown with their control and bidi characters escaped."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__({k: clean(v) if isinstance(v, str) else v for k, v in values.items()})

    def __missing__(self, key: str) -> str:
        return "?"


def fill(context: str, text: str, values: Mapping[str, Any]) -> str:
    template = translated(context, text)
    try:
        return template.format_map(Values(values))
    except (ValueError, IndexError, AttributeError):  # a bad translation: use the source
        return text.format_map(Values(values))
