"""``gpufleet prometheus …``: secrets of the Prometheus pieces, and a look at a server.

    gpufleet prometheus set-secret NAME [--kind token|password] [--generate] [--delete]
    gpufleet prometheus discover NAME

``NAME`` is a ``[[prometheus]]`` entry of config.toml (its bearer token or basic-auth password),
or ``alertmanager`` for the shared token of the app's Alertmanager receiver. Secrets go to the
OS keyring only. ``discover`` queries the server once and lists its instances and GPUs.

Exit codes: 0 done; 1 no usable keyring, or the server cannot be queried; 2 bad usage;
8 no such entry.
"""

from __future__ import annotations

import argparse
import getpass
import secrets as pysecrets
import sys
from typing import Any

from gpufleet.cli.errors import EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE, CliError
from gpufleet.core.config import secrets
from gpufleet.core.config.configfile import ConfigError, load_config
from gpufleet.core.config.prometheus_sources import parse_sources
from gpufleet.core.prometheus.am_receiver import SECRET_NAME as AM_NAME
from gpufleet.core.prometheus.source import PromClient, PromError, PromSource, credentials


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "prometheus",
        help="secrets for Prometheus sources and the Alertmanager receiver; discovery",
        description="Prometheus host groups ([[prometheus]] in config.toml) and the "
        "Alertmanager receiver: store their secrets in the keyring, look at a server.",
    )
    sub = p.add_subparsers(dest="prometheus_command", metavar="ACTION", required=True)
    s = sub.add_parser("set-secret", help="store a token or password in the keyring")
    s.add_argument("name", metavar="NAME", help=f"a [[prometheus]] name, or {AM_NAME!r}")
    s.add_argument("--kind", choices=("token", "password"), default="token")
    s.add_argument("--generate", action="store_true", help="make a random token and print it")
    s.add_argument("--delete", action="store_true", help="remove the stored secret")
    s.set_defaults(func=run_set_secret)
    d = sub.add_parser("discover", help="list a server's instances and GPUs")
    d.add_argument("name", metavar="NAME")
    d.set_defaults(func=run_discover)


def _source(name: str) -> Any:
    try:
        sources = parse_sources(load_config().prometheus)
    except (ConfigError, ValueError) as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    for src in sources:
        if src.name == name:
            return src
    known = ", ".join(s.name for s in sources) or "none configured"
    raise CliError(f"no [[prometheus]] entry named {name!r} (entries: {known})", EXIT_NOT_FOUND)


def run_set_secret(args: argparse.Namespace) -> int:
    if args.name == AM_NAME:
        entry, kind = AM_NAME, "token"
        if args.kind != "token":
            raise CliError("the Alertmanager receiver takes a token, not a password", EXIT_USAGE)
    else:
        entry, kind = _source(args.name).secret_name, args.kind
    try:
        if args.delete:
            gone = secrets.delete_secret(entry, kind)  # type: ignore[arg-type]
            print(f"{'deleted' if gone else 'there was no'} {kind} for {args.name}")
            return EXIT_OK
        if args.generate:
            value = pysecrets.token_urlsafe(32)
        elif sys.stdin.isatty():
            value = getpass.getpass(f"{kind} for {args.name}: ")
        else:
            value = sys.stdin.readline().strip()
        if not value:
            raise CliError(f"an empty {kind} was not stored", EXIT_USAGE)
        secrets.set_secret(entry, kind, value)  # type: ignore[arg-type]
    except secrets.SecretStoreUnavailable as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    if args.generate:
        print(value)
        print(f"stored as the {kind} of {args.name} in the keyring", file=sys.stderr)
    else:
        print(f"stored the {kind} of {args.name} in the keyring")
    return EXIT_OK


def run_discover(args: argparse.Namespace) -> int:
    src = _source(args.name)
    try:
        token, basic = credentials(src)
        hellos = PromSource(
            PromClient(src.url, token=token, basic=basic, timeout=src.timeout_s), src.name
        ).discover()
    except PromError as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    except secrets.SecretStoreUnavailable as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    if not hellos:
        print(f"{src.url}: no DCGM_FI_DEV_GPU_TEMP series (is an exporter scraped?)")
        return EXIT_OK
    for key, hello in sorted(hellos.items()):
        names = sorted({g.name for g in hello.gpus})
        missing = sorted({c for g in hello.gpus for c in g.unsupported})
        print(f"{src.host_name(key)}: {len(hello.gpus)} GPUs ({', '.join(names)})")
        if missing:
            print(f"  not in Prometheus: {', '.join(missing)}")
    return EXIT_OK
