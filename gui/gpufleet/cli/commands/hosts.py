"""``gpufleet hosts …``: add, list, remove and import hosts; store their secrets; forget keys.

    gpufleet hosts add NAME --ssh "ssh -p PORT -i KEY user@host" [--price-per-hour P]
                            [--currency C] [--backend nvml|sim] [--scenario S] [--jump J]
                            [--tag T ...]
    gpufleet hosts list [--format table|json]
    gpufleet hosts remove NAME
    gpufleet hosts import-ssh-config [--all | ALIAS ...] [--ssh-config PATH]
    gpufleet hosts import --provider vast|runpod|lambda [--api-url URL] [--yes]
    gpufleet hosts bill NAME [--pause | --resume | --end]
    gpufleet hosts set-secret NAME [--kind password|key-passphrase] [--delete]
    gpufleet hosts forget-key NAME

Exit codes: 0 done; 1 failure (a malformed config file, an unusable keyring, a provider's
API refused or failed); 2 bad usage (a bad --ssh command, a bad name, a host that already
exists, nothing to import, an import not confirmed); 8 no such host / alias.
"""

from __future__ import annotations

import argparse
import getpass
import ipaddress
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from gpufleet_sampler import protocol

from gpufleet.cli import argtypes
from gpufleet.cli.errors import EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE, CliError
from gpufleet.cli.termwrap import say
from gpufleet.core.config import configfile as config
from gpufleet.core.config import secrets
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost import billing
from gpufleet.core.fleet.demo import DEMO_PREFIX, demo_hosts
from gpufleet.core.fleet.removal import remove_host
from gpufleet.core.link import hostkeys
from gpufleet.core.link import ssh_config as sshconfig
from gpufleet.core.link.ssh import SshError, parse_jump_spec
from gpufleet.core.link.ssh_command import SshCommandError, parse_ssh
from gpufleet.core.providers import importing
from gpufleet.core.providers import registry as providers
from gpufleet.core.providers.actions import FileActionRecord, ProviderActions
from gpufleet.core.providers.base import BillingState, ProviderError
from gpufleet.core.providers.import_billing import record_import_billing
from gpufleet.core.text.sanitize import clean

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")
_EPILOG = (
    "exit codes: 0 done, 1 failure (bad config file, keyring unusable), 2 bad usage, 8 no such host"
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "hosts",
        help="add, list, remove and import hosts; store their secrets",
        description="Manage the hosts gpufleet watches (stored in config.toml; passwords and "
        "key passphrases only in the OS keyring).",
        epilog=_EPILOG,
    )
    sub = p.add_subparsers(dest="hosts_command", metavar="ACTION", required=True)

    a = sub.add_parser(
        "add",
        help="add a host from the ssh command your provider shows",
        description="Add a host. --ssh takes the command line as your provider shows it, "
        'e.g. --ssh "ssh -p 41234 -i ~/.ssh/key root@ssh4.example.com". Without --ssh, NAME '
        "itself is the host (an alias of ~/.ssh/config works).",
        epilog=_EPILOG,
    )
    a.add_argument("name", metavar="NAME")
    a.add_argument("--ssh", metavar="COMMAND", help="the ssh command line that reaches the host")
    a.add_argument(
        "--jump", metavar="[USER@]HOST[:PORT]", help="ProxyJump host(s), comma-separated"
    )
    a.add_argument(
        "--price-per-hour", type=argtypes.non_negative, metavar="P", help="rental price per hour"
    )
    a.add_argument("--currency", default=None, metavar="C", help="currency of the price (USD)")
    a.add_argument("--backend", choices=("nvml", "sim"), default="nvml")
    a.add_argument(
        "--scenario",
        metavar="S",
        type=argtypes.scenario,
        help=f"sim scenario (with --backend sim): {', '.join(protocol.SIM_SCENARIOS)}",
    )
    a.add_argument(
        "--collector",
        choices=("auto", "sampler", "nvidia-smi"),
        default="auto",
        help="what reads the GPUs: the sampler (needs python3 >= 3.8 there), nvidia-smi, or "
        "auto (the sampler, nvidia-smi where there is no python3)",
    )
    a.add_argument("--tag", action="append", default=[], metavar="T", help="a tag (repeatable)")
    a.add_argument(
        "--auth",
        choices=("auto", "agent", "key", "password"),
        default="auto",
        help="how to log in (auto: key file, then ssh-agent, then a stored password)",
    )
    a.set_defaults(func=_add)

    ls = sub.add_parser("list", help="list the configured hosts", epilog=_EPILOG)
    ls.add_argument("--format", choices=("table", "json"), default="table")
    ls.set_defaults(func=_list)

    rm = sub.add_parser("remove", help="remove a host (and its stored secrets)", epilog=_EPILOG)
    rm.add_argument("name", metavar="NAME")
    rm.set_defaults(func=_remove)

    imp = sub.add_parser(
        "import-ssh-config",
        help="add hosts from ~/.ssh/config",
        description="Add hosts named by Host lines of ~/.ssh/config (Include honoured; "
        "wildcard patterns skipped). Without --all or aliases, lists what can be imported.",
        epilog=_EPILOG,
    )
    imp.add_argument("aliases", nargs="*", metavar="ALIAS")
    imp.add_argument("--all", action="store_true", help="import every concrete Host alias")
    imp.add_argument("--ssh-config", type=Path, default=None, metavar="PATH")
    imp.set_defaults(func=_import)

    pi = sub.add_parser(
        "import",
        help="add or update hosts from a provider account (vast.ai, RunPod, Lambda)",
        description="Reads the account's instances through the provider's API (key from "
        "VAST_API_KEY / RUNPOD_API_KEY / LAMBDA_API_KEY or `gpufleet providers login`) and "
        "adds or updates hosts: name, SSH command, price, currency, provider id. Shows the "
        "changes first; --yes applies them without asking.",
        epilog=_EPILOG,
    )
    pi.add_argument("--provider", required=True, choices=providers.names())
    pi.add_argument("--api-url", metavar="URL", help="the provider's API base URL")
    pi.add_argument("--yes", action="store_true", help="apply without asking")
    pi.set_defaults(func=_import_provider)

    bi = sub.add_parser(
        "bill",
        help="show or set a host's billing state (running, stopped paying storage, ended)",
        description="Without an option, shows the billing state and its history. --pause: "
        "the instance is stopped and bills storage only (its storage_per_hour); --resume: "
        "billed again; --end: returned, nothing billed any more.",
        epilog=_EPILOG,
    )
    bi.add_argument("name", metavar="NAME")
    what = bi.add_mutually_exclusive_group()
    what.add_argument("--pause", dest="state", action="store_const", const="storage")
    what.add_argument("--resume", dest="state", action="store_const", const="running")
    what.add_argument("--end", dest="state", action="store_const", const="ended")
    what.add_argument(
        "--sync",
        action="store_true",
        help="take the state from the provider (hosts imported with `hosts import`)",
    )
    bi.add_argument("--note", default="", help="a note kept with the change")
    bi.add_argument("--api-url", metavar="URL", help="the provider's API base URL (--sync)")
    bi.set_defaults(func=_bill)

    ss = sub.add_parser(
        "set-secret",
        help="store a host's password or key passphrase in the OS keyring",
        description="Prompts without echo (reads one line from stdin when it is not a "
        "terminal) and stores the secret in the OS keyring, never in a file.",
        epilog=_EPILOG,
    )
    ss.add_argument("name", metavar="NAME")
    ss.add_argument("--kind", choices=("password", "key-passphrase"), default="password")
    ss.add_argument("--delete", action="store_true", help="delete the stored secret instead")
    ss.set_defaults(func=_set_secret)

    fk = sub.add_parser(
        "forget-key",
        help="forget a host's remembered host key (after a reinstall)",
        epilog=_EPILOG,
    )
    fk.add_argument("name", metavar="NAME")
    fk.set_defaults(func=_forget_key)


# -- helpers --------------------------------------------------------------------------------


def _load() -> config.AppConfig:
    try:
        return config.load_config()
    except config.ConfigError as e:
        raise CliError(str(e), EXIT_FAILURE) from None


def _save(cfg: config.AppConfig) -> None:
    try:
        config.save_config(cfg)
    except (config.ConfigError, OSError) as e:
        raise CliError(f"cannot save {config.config_file_path()}: {e}", EXIT_FAILURE) from None


def _check_name(name: str) -> None:
    if not _NAME_RE.match(name):
        raise CliError(
            f"bad host name {name!r}: use letters, digits and . _ - @ + (up to 64, no spaces "
            "or colons)",
            EXIT_USAGE,
        )


def _check_jump(spec: str) -> None:
    """Each hop of --jump must name a host: a name, or an IP address (IPv6 with colons)."""
    try:
        hops = parse_jump_spec(spec)
    except SshError as e:
        raise CliError(f"--jump: {e}", EXIT_USAGE) from None
    for _, host, _ in hops:
        if ":" in host or host.startswith("-"):
            try:
                ipaddress.IPv6Address(host)
            except ValueError:
                raise CliError(
                    f"--jump: bad host {host!r} in {spec!r}: expected [USER@]HOST[:PORT], "
                    "comma-separated",
                    EXIT_USAGE,
                ) from None


def _find(cfg: config.AppConfig, name: str) -> HostConfig:
    h = cfg.host(name)
    if h is None:
        known = ", ".join(cfg.names()) or "none configured"
        raise CliError(f"no host named {name!r} (hosts: {known})", EXIT_NOT_FOUND)
    return h


def _target(h: HostConfig) -> str:
    if h.transport == "local":
        return "local"
    who = f"{h.user}@" if h.user else ""
    return f"{who}{h.host}:{h.port}" + (f" via {h.jump}" if h.jump else "")


# -- actions --------------------------------------------------------------------------------


def _add(args: argparse.Namespace) -> int:
    _check_name(args.name)
    cfg = _load()
    if cfg.host(args.name) is not None:
        raise CliError(
            f"a host named {args.name!r} already exists (remove it first, or pick another name)",
            EXIT_USAGE,
        )
    fields: dict[str, Any] = {"name": args.name, "host": args.name, "auth": args.auth}
    note = ""
    if args.ssh is not None and not args.ssh.strip():
        raise CliError(
            '--ssh is empty: give the command your provider shows (--ssh "ssh -p PORT '
            'user@host"), or leave --ssh out to reach NAME itself',
            EXIT_USAGE,
        )
    if args.ssh:
        try:
            parsed = parse_ssh(args.ssh)
        except SshCommandError as e:
            raise CliError(f"--ssh: {e}", EXIT_USAGE) from None
        fields.update({k: v for k, v in parsed.as_dict().items() if v is not None})
        key = parsed.key_path
        if key and not Path(key).expanduser().is_file():
            raise CliError(f"--ssh: the key file given with -i does not exist: {key}", EXIT_USAGE)
        note = parsed.ignored_note()
    if args.jump:
        _check_jump(args.jump)
        fields["jump"] = args.jump
    if args.price_per_hour is not None:
        if args.price_per_hour < 0:
            raise CliError("--price-per-hour must not be negative", EXIT_USAGE)
        fields["price_per_hour"] = args.price_per_hour
    if args.currency:
        fields["currency"] = args.currency.upper()
    fields["backend"] = args.backend
    if args.collector != "auto":
        fields["collector"] = args.collector
    if args.scenario:
        fields["scenario"] = args.scenario
    if args.scenario and args.backend != "sim":
        # A scenario is the simulator's: on an NVML host it would be stored and never used.
        raise CliError(
            "--scenario is for the simulator: add --backend sim, or leave --scenario out",
            EXIT_USAGE,
        )
    if args.backend == "sim" and not args.scenario:
        raise CliError("--backend sim needs --scenario (e.g. healthy-8xa100)", EXIT_USAGE)
    if args.tag:
        fields["tags"] = tuple(dict.fromkeys(args.tag))
    try:
        host = config.host_from_dict(
            {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()}, "hosts add"
        )
    except config.ConfigError as e:
        raise CliError(str(e), EXIT_USAGE) from None
    cfg.hosts.append(host)
    _save(cfg)
    print(f"added {host.label}")
    if note:
        print(f"--ssh: {note}")
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    cfg = _load()
    if args.format == "json":
        print(json.dumps([config.host_to_dict(h) for h in cfg.hosts], indent=2))
        return EXIT_OK
    if not cfg.hosts:
        demo = ", ".join(f"{DEMO_PREFIX}{d.name}" for d in demo_hosts())
        say(
            'no hosts configured (add one with `gpufleet hosts add NAME --ssh "ssh …"`); '
            f"the demo fleet's hosts work with every command: {demo}"
        )
        return EXIT_OK
    rows = [("NAME", "TARGET", "BACKEND", "PRICE/H", "TAGS")]
    for h in cfg.hosts:
        backend = h.backend + (f"/{h.scenario}" if h.scenario else "")
        price = f"{h.price_per_hour:g} {h.currency}" if h.price_per_hour is not None else "-"
        rows.append((h.name, _target(h), backend, price, ",".join(h.tags) or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return EXIT_OK


def _remove(args: argparse.Namespace) -> int:
    host = _find(_load(), args.name)
    try:
        removed = remove_host(host.name)
    except (config.ConfigError, OSError) as e:
        raise CliError(f"cannot save {config.config_file_path()}: {e}", EXIT_FAILURE) from None
    print(f"removed {host.name}")
    if removed.secrets_deleted:
        print(f"deleted its stored {' and '.join(removed.secrets_deleted)} from the keyring")
    if removed.secrets_note:
        print(f"gpufleet: note: stored secrets were not deleted: {removed.secrets_note}",
              file=sys.stderr)  # fmt: skip
    return EXIT_OK


def _import(args: argparse.Namespace) -> int:
    path = args.ssh_config or sshconfig.default_path()
    if Path(path).exists() and not Path(path).is_file():
        raise CliError(f"{path} is not a file: give --ssh-config the ssh config file", EXIT_USAGE)
    if not Path(path).exists():
        raise CliError(
            f"{path} does not exist: there is no ssh config to import from (add the host with "
            "`gpufleet hosts add NAME --ssh 'ssh -p PORT user@host'`)",
            EXIT_NOT_FOUND,
        )
    try:
        available = sshconfig.importable_aliases(path)
        ssh_cfg = sshconfig.load(path)
    except sshconfig.SshConfigError as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    if not available and not args.aliases:
        raise CliError(f"{path}: no Host entries to import", EXIT_NOT_FOUND)
    if not args.all and not args.aliases:
        print(f"importable from {path}: {' '.join(available)}")
        print("import with: gpufleet hosts import-ssh-config --all   (or name the aliases)")
        return EXIT_USAGE
    wanted = available if args.all else list(dict.fromkeys(args.aliases))
    missing = [a for a in wanted if a not in available]
    if missing:
        raise CliError(
            f"{path}: no Host entry {', '.join(repr(m) for m in missing)} (there are: "
            f"{', '.join(available) or 'none'})",
            EXIT_NOT_FOUND,
        )
    cfg = _load()
    added: list[str] = []
    for alias in wanted:
        if cfg.host(alias) is not None:
            print(f"skipped {alias}: a host of that name exists")
            continue
        if not _NAME_RE.match(alias):
            print(f"skipped {alias}: not usable as a host name")
            continue
        try:
            t = sshconfig.lookup(alias, cfg=ssh_cfg)
        except sshconfig.SshConfigError as e:
            raise CliError(str(e), EXIT_FAILURE) from None
        host = t.host_config()
        cfg.hosts.append(host)
        added.append(alias)
        print(f"added {host.label}")
    if added:
        _save(cfg)
    return EXIT_OK


def _read_secret(prompt: str) -> str:
    if sys.stdin.isatty():
        first = getpass.getpass(prompt)
        second = getpass.getpass("again: ")
        if first != second:
            raise CliError("the two entries differ; nothing stored", EXIT_USAGE)
        return first
    line = sys.stdin.readline()
    return line[:-1] if line.endswith("\n") else line


def _set_secret(args: argparse.Namespace) -> int:
    cfg = _load()
    host = _find(cfg, args.name)
    kind = args.kind
    try:
        if args.delete:
            if secrets.delete_secret(host.name, kind):
                print(f"deleted the {kind} of {host.name} from the keyring")
            else:
                print(f"no {kind} of {host.name} was stored")
            return EXIT_OK
        value = _read_secret(f"{kind} for {host.label}: ")
        if not value:
            raise CliError(f"empty {kind}: nothing stored", EXIT_USAGE)
        secrets.set_secret(host.name, kind, value)
    except secrets.SecretStoreUnavailable as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    print(f"stored the {kind} of {host.name} in the OS keyring")
    return EXIT_OK


def _forget_key(args: argparse.Namespace) -> int:
    cfg = _load()
    host = _find(cfg, args.name)
    name = hostkeys.host_key_name(host.host, host.port)
    try:
        t = sshconfig.lookup(host.host)
        port = host.port if host.port != 22 else (t.port or 22)
        resolved = hostkeys.host_key_name(t.hostname, port)
    except sshconfig.SshConfigError:
        resolved = name
    known = hostkeys.KnownHosts()
    removed = sum(known.forget(n) for n in dict.fromkeys((name, resolved)))
    print(f"forgot {removed} remembered key(s) of {host.name} ({resolved})")
    if known.keys_for(resolved) and known.system_file.exists():
        print(
            f"note: {known.system_file} also has a key for {resolved}; gpufleet does not edit "
            f"it: run `ssh-keygen -R '{resolved}'` if it is stale"
        )
    return EXIT_OK


# -- provider import and billing ----------------------------------------------------------


def _price(h: HostConfig | None) -> str:
    if h is None or h.price_per_hour is None:
        return "-"
    return f"{h.price_per_hour:g} {h.currency}/h"


def _import_provider(args: argparse.Namespace) -> int:
    try:
        prov = providers.open_provider(args.provider, args.api_url)
        instances = prov.list_instances()
    except ProviderError as e:
        code = EXIT_USAGE if e.kind == "no_key" else EXIT_FAILURE
        raise CliError(clean(str(e)), code) from None
    cfg = _load()
    changes = importing.plan(cfg.hosts, instances)
    if not changes:
        print(f"{prov.label}: no instances in the account")
        return EXIT_OK
    for c in changes:
        print(_change_line(c, prov.label))
    todo = [c for c in changes if c.kind in ("add", "update")]
    if not todo:
        print("nothing to change")
    elif not args.yes:
        if not sys.stdin.isatty():
            print("nothing changed: run again with --yes to apply")
            return EXIT_USAGE
        answer = input(f"apply {len(todo)} change(s) to {config.config_file_path()}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing changed")
            return EXIT_OK
    if todo:
        cfg.hosts = importing.apply(cfg.hosts, changes)
        _save(cfg)
        print(f"applied {len(todo)} change(s)")
    _record_provider_billing(changes)
    return EXIT_OK


def _change_line(c: importing.Change, label: str) -> str:
    """One line of an import's plan; every string from the provider escaped (``clean``)."""
    inst = c.instance
    state = clean(inst.state)
    if c.kind == "add" and c.host is not None:
        ssh, gpu = clean(inst.ssh_command or "-"), clean(inst.gpu_label or "?")
        return f"  add     {c.host.name}: {ssh}, {gpu}, {_price(c.host)} ({state})"
    if c.kind == "update" and c.host is not None and c.before is not None:
        diffs = ", ".join(
            f"{f} {clean(repr(getattr(c.before, f)))} -> {clean(repr(getattr(c.host, f)))}"
            for f in c.fields
        )
        return f"  update  {c.host.name}: {diffs}"
    if c.kind == "same" and c.host is not None:
        return f"  same    {c.host.name} ({state})"
    if c.kind == "ended" and c.before is not None:
        return f"  ended   {c.before.name}: the instance is gone at {label} (kept here)"
    name = c.before.name if c.before else clean(inst.name)
    if c.kind == "invalid":
        return f"  skip    {name} (instance {clean(inst.id)}): not imported: {clean(c.problem)}"
    return f"  skip    {name}: no SSH endpoint yet ({state})"


def _record_provider_billing(changes: list[importing.Change]) -> None:
    """The provider's word on each imported host's billing state goes into the ledger."""
    try:
        record_import_billing(changes)
    except billing.BillingFileError as e:
        print(f"gpufleet: note: billing states not recorded: {e}", file=sys.stderr)


def _bill(args: argparse.Namespace) -> int:
    cfg = _load()
    host = _find(cfg, args.name)
    try:
        ledger = billing.BillingLedger.load()
    except billing.BillingFileError as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    if args.note and args.state is None and not args.sync:
        raise CliError(
            "--note is kept with a change: add --pause, --resume, --end or --sync", EXIT_USAGE
        )
    if args.sync:
        if not host.provider:
            raise CliError(f"{host.name} was not imported from a provider", EXIT_USAGE)
        found: list[BillingState] = []
        acts = ProviderActions(
            {host.name: host}.get,
            FileActionRecord(),
            opener=lambda name: providers.open_provider(name, args.api_url),
            on_billing=lambda h, st: found.append(st),
        )
        outcome = acts.sync_billing(host.name)
        if outcome.rc:
            raise CliError(clean(outcome.message), EXIT_FAILURE)
        print(f"{clean(outcome.message)} at {host.provider}")
        if not found:
            print(f"{host.name}: the provider's state does not say how it is billed")
            return EXIT_OK
        args.state = found[-1]
        args.note = args.note or f"from {host.provider}"
    if args.state is None:
        print(f"{host.name}: {_STATE_WORDS[ledger.state(host.name)]}")
        for ch in ledger.history(host.name):
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ch.t))
            note = f" ({ch.note})" if ch.note else ""
            print(f"  {when}  {ch.state:<8} {ch.source}{note}")
        return EXIT_OK
    source = "provider" if args.sync else "hand"
    if ledger.record(host.name, args.state, time.time(), source, args.note):
        ledger.save()
        print(f"{host.name}: {_STATE_WORDS[args.state]}")
    else:
        print(f"{host.name}: already {_STATE_WORDS[args.state]}")
    if args.state == "storage" and host.storage_per_hour is None:
        print(
            f"note: {host.name} has no storage_per_hour: its stopped time is billed as 0 "
            "(set it in config.toml where the provider charges for the disk)"
        )
    return EXIT_OK


_STATE_WORDS = {
    "running": "running (billed at its price per hour)",
    "storage": "stopped, paying for storage only",
    "ended": "ended (nothing billed)",
}
