"""``gpufleet providers …``: store a provider's API key, list the account's instances.

    gpufleet providers login vast|runpod|lambda     (prompts; stored in the OS keyring)
    gpufleet providers logout vast|runpod|lambda
    gpufleet providers list vast|runpod|lambda [--api-url URL] [--format table|json]

The key may instead come from the provider's own environment variable (VAST_API_KEY,
RUNPOD_API_KEY, LAMBDA_API_KEY), which wins. It is never written to a file or printed.

Exit codes: 0 done; 1 the API or the keyring failed; 2 bad usage (no key, empty key).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import Any

from gpufleet.cli.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError
from gpufleet.core.config import secrets
from gpufleet.core.providers import credentials
from gpufleet.core.providers import registry as providers
from gpufleet.core.providers.base import ProviderError
from gpufleet.core.text.sanitize import clean

_EPILOG = "exit codes: 0 done, 1 the provider's API or the keyring failed, 2 bad usage"


_PROVIDER_ARG: dict[str, Any] = {
    "choices": providers.names(),
    "metavar": "PROVIDER",
    "help": " or ".join(providers.names()),
}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "providers",
        help="rental providers' APIs: store a key, list instances",
        description="vast.ai, RunPod and Lambda accounts: API keys in the OS keyring (or the "
        "provider's environment variable), the account's instances. AutoDL and most Chinese "
        "platforms have no public API: power the instance off to stop the GPU bill.",
        epilog=_EPILOG,
    )
    sub = p.add_subparsers(dest="providers_command", metavar="ACTION", required=True)
    li = sub.add_parser("login", help="store a provider's API key in the OS keyring")
    li.add_argument("provider", **_PROVIDER_ARG)
    li.set_defaults(func=_login)
    lo = sub.add_parser("logout", help="delete a provider's stored API key")
    lo.add_argument("provider", **_PROVIDER_ARG)
    lo.set_defaults(func=_logout)
    ls = sub.add_parser("list", help="list the account's instances", epilog=_EPILOG)
    ls.add_argument("provider", **_PROVIDER_ARG)
    ls.add_argument("--api-url", metavar="URL", help="the provider's API base URL")
    ls.add_argument("--format", choices=("table", "json"), default="table")
    ls.set_defaults(func=_list)


def _login(args: argparse.Namespace) -> int:
    var = credentials.ENV_VARS[args.provider]
    if sys.stdin.isatty():
        key = getpass.getpass(f"{args.provider} API key (input hidden): ").strip()
    else:
        key = sys.stdin.readline().strip()
    if not key:
        raise CliError("empty API key: nothing stored", EXIT_USAGE)
    try:
        credentials.store_key(args.provider, key)
    except secrets.SecretStoreUnavailable as e:
        raise CliError(f"{e} (or set {var} in the environment instead)", EXIT_FAILURE) from None
    print(f"stored the {args.provider} API key in the OS keyring ({var} overrides it when set)")
    return EXIT_OK


def _logout(args: argparse.Namespace) -> int:
    try:
        deleted = credentials.delete_key(args.provider)
    except secrets.SecretStoreUnavailable as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    print(
        f"deleted the stored {args.provider} API key"
        if deleted
        else f"no {args.provider} API key was stored"
    )
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    try:
        instances = providers.open_provider(args.provider, args.api_url).list_instances()
    except ProviderError as e:
        raise CliError(clean(str(e)), EXIT_USAGE if e.kind == "no_key" else EXIT_FAILURE) from None
    if args.format == "json":
        print(
            json.dumps([dict(i.__dict__, ssh_command=i.ssh_command) for i in instances], indent=2)
        )
        return EXIT_OK
    rows: list[tuple[str, ...]] = [("ID", "NAME", "STATE", "BILLING", "GPU", "PRICE/H", "SSH")]
    for i in instances:
        price = f"{i.price_per_hour:g} {i.currency}" if i.price_per_hour is not None else "-"
        cells = (i.id, i.name, i.state, i.billing or "?", i.gpu_label or "-", price)
        # The provider's strings, escaped: a name cannot move the cursor or forge a row.
        rows.append(tuple(clean(c) for c in (*cells, i.ssh_command or "-")))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    for r in rows:
        print("  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip())
    return EXIT_OK
