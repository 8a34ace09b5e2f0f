"""Remote strings made safe for a terminal or a text file.

Process names, command lines, GPU names, driver versions, event messages and error texts come
from the instance, which may be hostile or merely broken. Printed raw they can clear the
screen, hide text, move the cursor, rewrite the clipboard (OSC 52) or, with bidirectional
controls, make a line read differently from what it holds. Here every such character is
shown escaped (``\\x1b``, ``\\u202e``) instead: C0 and C1 controls, DEL, the bidi embedding,
override and isolate controls and marks, zero-width characters, line and paragraph
separators, and lone surrogates (which would make the write itself fail).

``clean`` is for one value (a newline in it is escaped too, so a value cannot forge a line
of its own); ``clean_text`` is for a whole text of ours that embeds values (its newlines and
tabs stay). JSON outputs do not go through here: they stay exact.
"""

from __future__ import annotations

import re

__all__ = ["clean", "clean_text"]

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_INVISIBLE = "\u200b-\u200d\u2060\ufeff"
_SEPARATORS = "\u2028\u2029"
_SURROGATES = "\ud800-\udfff"
_OTHERS = _BIDI + _INVISIBLE + _SEPARATORS + _SURROGATES
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_OTHERS}]")
_UNSAFE_IN_TEXT = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_OTHERS}]")


def _escape(m: re.Match[str]) -> str:
    o = ord(m.group())
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def clean(value: object) -> str:
    """One remote value as text with every control, bidi and invisible character escaped."""
    s = value if isinstance(value, str) else str(value)
    return _UNSAFE.sub(_escape, s)


def clean_text(text: str) -> str:
    """A whole text as ``clean`` does, but keeping its newlines and tabs."""
    return _UNSAFE_IN_TEXT.sub(_escape, text)
