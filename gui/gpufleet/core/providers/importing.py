"""Hosts from a provider's account: what an import would add or change, then applied.

An instance matches the host that carries its provider and id; else it is new and takes
the instance's name (made a valid host name; suffixed with its id when the name is taken).
Instances that ended are never added; a host whose instance ended is reported, not removed
(its history and cost stay). Only the fields the provider knows are updated: SSH target,
price, currency, storage price, provider id; names, tags, rules and secrets stay the user's.

Every host an import would write passes the config loader's own checks first
(``configfile.host_from_dict``: port range, a finite price, an SSH target that is not an
option): a provider that answers port 99999, a NaN price or a host of ``-oProxyCommand=…``
gets that instance skipped and named (``invalid``), and config.toml stays loadable.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from gpufleet.core.config.configfile import ConfigError, host_from_dict, host_to_dict
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.providers.base import Instance

ChangeKind = Literal["add", "update", "same", "ended", "no_ssh", "invalid"]
_BAD = re.compile(r"[^A-Za-z0-9._@+-]+")
_UPDATED = ("host", "port", "user", "price_per_hour", "currency", "storage_per_hour")


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    instance: Instance
    host: HostConfig | None  # the host after the change (None: nothing to add)
    before: HostConfig | None = None
    fields: tuple[str, ...] = ()  # for "update": the fields that change
    problem: str = ""  # for "invalid": what the config loader refuses in it


def host_name(inst: Instance, taken: set[str]) -> str:
    base = _BAD.sub("-", inst.name).strip("-.") or f"{inst.provider}-{inst.id}"
    base = base[:48]
    if not base[0].isalnum():
        base = f"{inst.provider}-{base}"
    name = base if base not in taken else f"{base}-{inst.id}"[:64]
    return name


def _fields(inst: Instance) -> dict[str, object]:
    return {
        "host": inst.ssh_host,
        "port": inst.ssh_port or 22,
        "user": inst.ssh_user,
        "price_per_hour": inst.price_per_hour,
        "currency": inst.currency,
        "storage_per_hour": inst.storage_per_hour,
    }


def _problem(h: HostConfig) -> str:
    """What the config loader would refuse in ``h`` ("" when nothing)."""
    try:
        host_from_dict(host_to_dict(h), "from the provider")
    except ConfigError as e:
        return str(e)
    return ""


def _checked(change: Change) -> Change:
    if change.host is None or change.kind not in ("add", "update"):
        return change
    problem = _problem(change.host)
    if not problem:
        return change
    return Change("invalid", change.instance, None, change.before, problem=problem)


def plan(hosts: Sequence[HostConfig], instances: Sequence[Instance]) -> list[Change]:
    """What an import would do; an add or update the config loader would refuse is
    ``invalid`` (skipped, with the reason) instead."""
    return [_checked(c) for c in _plan(hosts, instances)]


def _plan(hosts: Sequence[HostConfig], instances: Sequence[Instance]) -> list[Change]:
    by_id = {(h.provider, h.provider_id): h for h in hosts if h.provider and h.provider_id}
    taken = {h.name for h in hosts}
    out: list[Change] = []
    for inst in instances:
        before = by_id.get((inst.provider, inst.id))
        if inst.billing == "ended":
            if before is not None:
                out.append(Change("ended", inst, None, before))
            continue
        if not inst.ssh_host:
            out.append(Change("no_ssh", inst, None, before))
            continue
        new = _fields(inst)
        if before is None:
            name = host_name(inst, taken)
            taken.add(name)
            h = HostConfig(name=name, provider=inst.provider, provider_id=inst.id, **new)  # type: ignore[arg-type]
            out.append(Change("add", inst, h))
            continue
        changed = tuple(k for k in _UPDATED if new[k] is not None and getattr(before, k) != new[k])
        if not changed:
            out.append(Change("same", inst, before, before))
            continue
        after = dataclasses.replace(before, **{k: new[k] for k in changed})  # type: ignore[arg-type]
        out.append(Change("update", inst, after, before, changed))
    return out


def apply(hosts: Sequence[HostConfig], changes: Sequence[Change]) -> list[HostConfig]:
    """The host list with the adds appended and the updates in place."""
    updated = {c.before.name: c.host for c in changes if c.kind == "update" and c.before and c.host}
    out = [updated.get(h.name, h) or h for h in hosts]
    out += [c.host for c in changes if c.kind == "add" and c.host is not None]
    return out
