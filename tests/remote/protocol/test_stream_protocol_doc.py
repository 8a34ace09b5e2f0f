"""docs/protocol.md stays in sync with gpufleet_sampler.protocol.

The column and reason-bit tables in the document are generated from ``protocol.COLUMNS`` and
``protocol.REASON_BITS``; this test fails when they differ. Regenerate them with

    .venv/bin/python -m tests.remote.protocol.test_stream_protocol_doc --write

Every other name the protocol defines (nominal keys, process keys, event types, kinds) must at
least appear in the document.
"""

from __future__ import annotations

import re
import sys

from gpufleet_sampler import protocol, protocol_schema

from tests.support.paths import ROOT

DOC = ROOT / "docs" / "protocol.md"


def render_columns() -> str:
    lines = [
        "| pos | name | unit | meaning |",
        "|---:|---|---|---|",
        "| 0 | (GPU index) | | the GPU's `index` in `hello.gpus` |",
    ]
    for pos, (name, unit, desc) in enumerate(protocol.COLUMNS, start=1):
        lines.append(f"| {pos} | `{name}` | {unit} | {desc} |")
    return "\n".join(lines)


def render_reasons() -> str:
    lines = ["| bit | label | meaning |", "|---|---|---|"]
    for bit, label, desc in protocol.REASON_BITS:
        lines.append(f"| `{bit:#x}` | `{label}` | {desc} |")
    return "\n".join(lines)


def render_link_columns() -> str:
    lines = [
        "| pos | name | unit | meaning (one value per link) |",
        "|---:|---|---|---|",
        "| 0 | (GPU index) | | the GPU's `index` in `hello.gpus` |",
    ]
    for pos, (name, unit, desc) in enumerate(protocol.LINK_COLUMNS, start=1):
        lines.append(f"| {pos} | `{name}` | {unit} | {desc} |")
    return "\n".join(lines)


def _cell(text: str) -> str:
    """Text for a Markdown table cell (a bare "|" would end the cell)."""
    return text.replace("|", " \\| ")


def render_check_gpu() -> str:
    lines = ["| key | type | meaning |", "|---|---|---|"]
    for name, types, desc in protocol_schema.CHECK_GPU_KEYS:
        lines.append(f"| `{name}` | {_cell(types)} | {_cell(desc)} |")
    return "\n".join(lines)


def render_event_keys() -> str:
    lines = ["| `type` | key | type | meaning |", "|---|---|---|---|"]
    for typ, facts in protocol_schema.EVENT_TYPE_KEYS.items():
        for name, types, desc in facts:
            lines.append(f"| `{typ}` | `{name}` | {_cell(types)} | {_cell(desc)} |")
    return "\n".join(lines)


GENERATED = {
    "check_gpu": render_check_gpu,
    "event_keys": render_event_keys,
    "columns": render_columns,
    "reasons": render_reasons,
    "link_columns": render_link_columns,
}


def _block(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- generated:{name}:begin -->\n)(.*?)(\n<!-- generated:{name}:end -->)", re.S
    )


def regenerate(text: str) -> str:
    for name, fn in GENERATED.items():
        text, n = _block(name).subn(lambda m, fn=fn: m.group(1) + fn() + m.group(3), text)
        assert n == 1, f"docs/protocol.md lacks the generated:{name} markers"
    return text


def test_generated_tables_are_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert regenerate(text) == text, (
        "docs/protocol.md is out of date: run "
        ".venv/bin/python -m tests.remote.protocol.test_stream_protocol_doc --write"
    )


def test_every_protocol_name_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    names = (
        list(protocol.COLUMN_NAMES)
        + [k for k, _ in protocol.NOMINAL_KEYS]
        + list(protocol.PROC_KEYS)
        + list(protocol.PROC_MAP_KEYS)
        + list(protocol.MAPPINGS)
        + list(protocol.WHERES)
        + list(protocol.EVENT_TYPES)
        + list(protocol.KINDS)
        + list(protocol.LINK_COLUMN_NAMES)
        + [protocol.LINKS_UNSUPPORTED_KEY]
        + [protocol.CPU_BUDGET_KEY, protocol.GPU_COST_KEY, protocol.SKIPPED_KEY]
        + list(
            protocol_schema.names(
                protocol_schema.HELLO_KEYS,
                protocol_schema.HELLO_OPTIONAL,
                protocol_schema.GPU_KEYS,
                protocol_schema.CARD_KEYS,
                protocol_schema.CPU_BUDGET_KEYS,
                protocol_schema.SLICE_KEYS,
                protocol_schema.GPU_OPTIONAL,
                protocol_schema.INFO_KEYS,
                protocol_schema.CHECK_KEYS,
                protocol_schema.EVENT_KEYS,
            )
        )
    )
    missing = [n for n in names if f"`{n}`" not in text]
    assert not missing, f"not documented in docs/protocol.md: {missing}"
    assert f"`protocol`: {protocol.PROTOCOL_VERSION}" in text


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        DOC.write_text(regenerate(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(render_columns())
        print()
        print(render_reasons())
