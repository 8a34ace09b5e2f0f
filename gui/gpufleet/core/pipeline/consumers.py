"""The alert consumers every front end builds the same way: the webhooks and the rule-action
runner, so that the window and ``gpufleet serve`` (no window) notify and act alike.

- Webhooks: the ones in the settings (``[settings.webhooks.NAME]``) and the ones in the
  user's rules.toml (``[webhooks.NAME]``; the settings win on a shared name), their URLs read
  from the keyring (blocking: a front end calls ``load_webhook_list`` off any thread that must
  not wait). A settings webhook gets every alert at or above its minimum severity; a rules.toml
  webhook gets the alerts of the rules that name it (``notify = [...]``).
- Rule actions: local commands, remote ones through the fleet (``Fleet.run_shell``), and
  provider actions (stop / terminate the instance through its provider's API, skipped while
  the instance's own watchdog is armed); a provider action that stops the bill hands the new
  billing state to ``set_billing``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpufleet.core.alerts.actions import ActionRun, ActionRunner
from gpufleet.core.alerts.rules import RulesError, load_webhook_table
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.settings import Settings, webhook_table
from gpufleet.core.cost.billing import BillingState, record_and_apply
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.notify.webhooks import Delivery, Notifier, Webhook, load_webhooks
from gpufleet.core.pipeline.outputs import NoOutputs
from gpufleet.core.providers.actions import run_provider_hook
from gpufleet.core.providers.base import ProviderError
from gpufleet.core.wire.messages import Hello


def webhook_specs(settings: Settings) -> tuple[dict[str, Any], frozenset[str], list[str]]:
    """(name -> spec of every webhook, the names from the settings, problems)."""
    table: dict[str, Any] = {}
    problems: list[str] = []
    try:
        table.update(load_webhook_table())
    except RulesError as e:
        problems.append(str(e))
    table.update(webhook_table(settings))
    return table, frozenset(w.name for w in settings.webhooks), problems


def load_webhook_list(table: Mapping[str, Any]) -> tuple[list[Webhook], list[str]]:
    """The webhooks whose URL is in the keyring; one problem line for each other one (a
    missing URL silences that webhook only). Blocking (the keyring)."""
    hooks: list[Webhook] = []
    problems: list[str] = []
    for name, spec in table.items():
        try:
            hooks.extend(load_webhooks({name: spec}, "webhooks"))
        except Exception as e:  # WebhookError, SecretStoreUnavailable: one line each
            problems.append(str(e))
    return hooks, problems


@dataclass(frozen=True)
class Webhooks:
    """The webhooks a front end installs in its alerting stage (``Alerting.set_webhooks``)."""

    notifier: Notifier | None  # started; None when no webhook is usable
    subscribed: frozenset[str]  # the settings' webhooks (every alert at their severity)
    problems: tuple[str, ...]  # one line per webhook not used, and why


def start_webhooks(
    hooks: Sequence[Webhook], subscribed: frozenset[str], on_result: Callable[[Delivery], None]
) -> tuple[Notifier | None, frozenset[str]]:
    """A started notifier for ``hooks`` (None for none) and the subscribed names among them."""
    names = frozenset(w.name for w in hooks)
    notifier = Notifier(list(hooks), on_result=on_result) if hooks else None
    if notifier is not None:
        notifier.start()
    return notifier, subscribed & names


def build_webhooks(settings: Settings, on_result: Callable[[Delivery], None]) -> Webhooks:
    """Every webhook of the settings and rules.toml, started. Blocking (the keyring)."""
    table, subscribed, problems = webhook_specs(settings)
    hooks, more = load_webhook_list(table) if table else ([], [])
    notifier, used = start_webhooks(hooks, subscribed, on_result)
    return Webhooks(notifier, used, tuple(problems + more))


def build_action_runner(
    fleet: Fleet,
    *,
    demo: bool,
    hello_of: Callable[[str], Hello | None],
    on_done: Callable[[ActionRun], None],
    set_billing: Callable[[str, BillingState], None],
    on_drift: Callable[[str, ProviderError | None], None] | None = None,
) -> ActionRunner:
    """The rule actions of a running front end (see the module docstring); ``hello_of``:
    a host's latest hello (whether its own watchdog is armed); ``on_drift``: where a provider
    action that finds the provider's API changed says so (``drift_board.DriftBoard``)."""

    def run_remote(host: str, command: str) -> tuple[int, str]:
        rc, out = fleet.run_shell(host, command)
        return int(rc), str(out)

    def host(name: str) -> HostConfig | None:
        return next((h for h in fleet.hosts() if h.name == name), None)

    run_provider = run_provider_hook(
        host, hello_of, on_billing=record_and_apply(set_billing), on_drift=on_drift
    )
    return ActionRunner(
        run_remote=run_remote, demo=demo, on_done=on_done, run_provider=run_provider
    )


class LatestHellos(NoOutputs):
    """The hub's outputs of a process without a window: only each host's latest hello is
    kept (what the provider actions ask). Written on the hub's thread; a read takes one
    reference, so any thread may read."""

    def __init__(self) -> None:
        self._by_host: dict[str, Hello] = {}

    def hello(self, host: str) -> Hello | None:
        return self._by_host.get(host)

    def on_hello(self, host: str, hello: Hello) -> None:
        self._by_host[host] = hello
