"""The case a restart must not repeat, shared by the window's test (tests/ui/app/test_restart.py)
and ``gpufleet serve``'s (tests/integration/serve/test_serve_headless.py): a thermal-throttle rule
that fires within seconds on the demo's throttling H100 and runs a local action (appending a
line to ``ran``), and the count of its firing posts a webhook received."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpufleet.core.config import paths


def write_throttle_rule(ran: Path) -> None:
    """rules.toml: thermal_throttle after 2 s, resolving only after 10 min, with an action."""
    rules = paths.rules_file()
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text(
        "[rules.thermal_throttle]\nfor_s = 2\nclear_for_s = 600\nactions = [\n"
        f'  {{ type = "local", command = "echo ran >> {ran}", grace_s = 0.5 }},\n]\n',
        encoding="utf-8",
    )


def firing_posts(bodies: list[dict[str, Any]]) -> int:
    """How many webhook posts said the thermal_throttle alert fired."""
    return sum(
        1
        for b in bodies
        if b["alert"]["rule_id"] == "thermal_throttle" and b["alert"]["state"] == "firing"
    )
