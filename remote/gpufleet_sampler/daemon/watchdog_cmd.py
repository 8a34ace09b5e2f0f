"""``watchdog arm|disarm|status|cancel``: the sampler subcommand that talks to the running
daemon's watchdog (``gpufleet_sampler.watchdog``), or edits its state file when no daemon
runs (a daemon started later takes it up).

Python 3.8, stdlib only.
"""

import argparse
import json
from typing import Any, Dict

from gpufleet_sampler.daemon import client
from gpufleet_sampler.state_dir import paths_for
from gpufleet_sampler.watchdog import Watchdog, parse_config, state_path


def run(args: argparse.Namespace) -> int:
    """Prints one JSON object; exit 0 ok, 1 refused, 2 bad config."""
    p = paths_for(args)
    cfg: Dict[str, Any] = {}
    if args.cmd == "arm":
        cfg = {
            "action": args.action,
            "command": args.run_command,
            "idle_s": args.idle_s,
            "grace_s": args.grace_s,
            "dry_run": args.dry_run,
            "api_url": args.api_url,
        }
        cfg = {k: v for k, v in cfg.items() if v is not None}
        try:
            parse_config(cfg)
        except ValueError as e:
            print(json.dumps({"ok": False, "message": str(e)}))
            return 2
    reply = client.request(p, {"op": "watchdog", "cmd": args.cmd, "config": cfg})
    if reply is None:
        w = Watchdog(state_path(p.dir, p.key))
        try:
            reply = {"ok": True, "watchdog": w.request(args.cmd, cfg), "daemon": False}
        except ValueError as e:
            reply = {"ok": False, "message": str(e), "watchdog": w.summary(), "daemon": False}
    else:
        reply["daemon"] = True
    print(json.dumps(reply))
    return 0 if reply.get("ok") else 1
