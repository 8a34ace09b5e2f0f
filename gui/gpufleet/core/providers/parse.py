"""Small readers for providers' JSON: a field of the wrong type is None, never a crash."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.core.providers.base import drift


def num(d: Mapping[str, Any], key: str) -> float | None:
    """A number that may come as a JSON number or a string ("0.74", as RunPod sends)."""
    v = d.get(key)
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def integer(d: Mapping[str, Any], key: str) -> int | None:
    v = num(d, key)
    return int(v) if v is not None and v == int(v) else None


def text(d: Mapping[str, Any], key: str) -> str | None:
    v = d.get(key)
    if isinstance(v, str) and v:
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return None


def table(d: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    v = d.get(key)
    return v if isinstance(v, dict) else {}


def records(label: str, what: str, doc: Any, key: str | None) -> list[Mapping[str, Any]]:
    """The list of objects under ``key`` (or the document itself when ``key`` is None)."""
    items = doc.get(key) if key is not None and isinstance(doc, dict) else doc
    if not isinstance(items, list):
        shape = type(items).__name__
        where = f"`{key}`" if key else "the answer"
        # JSON, but not the shape the adapter was written against: the API changed.
        raise drift(label, what, f"expected a list in {where}, got {shape}")
    return [x for x in items if isinstance(x, dict)]


def record(label: str, what: str, doc: Any, key: str | None) -> Mapping[str, Any]:
    item = doc.get(key) if key is not None and isinstance(doc, dict) else doc
    if isinstance(item, list) and len(item) == 1 and isinstance(item[0], dict):
        item = item[0]
    if not isinstance(item, dict):
        raise drift(label, what, f"expected an object, got {type(item).__name__}")
    return item
