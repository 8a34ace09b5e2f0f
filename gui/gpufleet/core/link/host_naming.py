"""A name for a host pasted as an ``ssh …`` command, when the user has not given one.

Before this, the name was the address's first dot-separated part: "203" for 203.0.113.7,
"ssh5" for vast.ai's ssh5.vast.ai, "ssh" for RunPod's proxy. Now: a provider's SSH gateway
gives the provider's name and what tells its instances apart there (vast.ai: the port;
RunPod's proxy: the pod id that opens the user name), an IP address is kept whole (dots as
dashes), and any other host name gives its first label unless that label is generic
("ssh", "ssh5", "gateway"...), when the domain's own name is used.
"""

from __future__ import annotations

import ipaddress
import re

# Gateways whose first label says nothing about the machine behind them.
_GENERIC = re.compile(r"^(ssh|gw|gateway|proxy|bastion|jump|connect|login)\d*$", re.IGNORECASE)
_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]+")
MAX_LEN = 64


def _safe(name: str) -> str:
    name = _UNSAFE.sub("-", name).strip("-.")
    if not name or not name[0].isalnum():
        name = "host-" + name
    return name[:MAX_LEN]


def suggest_name(host: str, port: int = 22, user: str | None = None) -> str:
    """The name to suggest for ``user@host -p port``."""
    host = host.strip().strip("[]").lower()
    if not host:
        return ""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None:
        return _safe(str(ip).replace(".", "-").replace(":", "-"))
    labels = [p for p in host.split(".") if p]
    if host.endswith("vast.ai"):
        return _safe(f"vast-{port}")
    if host.endswith("runpod.io") and user:
        return _safe("runpod-" + user.split("-")[0])
    first = labels[0]
    if _GENERIC.match(first) and len(labels) >= 3:
        return _safe(f"{labels[-2]}-{port}" if port != 22 else labels[-2])
    return _safe(first)
