"""Text output wrapped to the terminal's width: findings, benchmark reasons and rule meanings
are sentences of 100 to 450 characters, unreadable when the terminal breaks them mid-word at
80 columns. Into a pipe or a file each line goes whole (scripts grep them; there is no width
to fit)."""

from __future__ import annotations

import shutil
import sys
import textwrap


def _width() -> int | None:
    """The terminal's columns when stdout is one (``COLUMNS`` wins, as ``ls`` does)."""
    if not sys.stdout.isatty():
        return None
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def say(text: str, indent: int | None = None) -> None:
    """Print each line of ``text``; on a terminal a line wider than it wraps at spaces, its
    continuations ``indent`` columns in (default: under its text, four more)."""
    width = _width()
    for line in text.split("\n"):
        if width is None or len(line) <= width:
            print(line)
            continue
        lead = len(line) - len(line.lstrip(" "))
        hang = " " * (indent if indent is not None else lead + 4)
        wrapper = textwrap.TextWrapper(
            width=width,
            subsequent_indent=hang,
            break_long_words=False,
            break_on_hyphens=False,
        )
        print("\n".join(wrapper.wrap(line)))
