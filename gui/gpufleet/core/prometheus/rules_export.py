"""gpufleet's alert rules as Prometheus alerting rules (``gpufleet rules export``).

Each rule (shipped, overridden by the user's ``rules.toml``, and by hosts' overrides) becomes
PromQL over the names both exporters serve (``gpufleet_sampler.metric_names``), with the
rule's ``for_s`` as ``for:``, its ``clear_for_s`` as ``keep_firing_for:`` (Prometheus >= 2.42),
its severity as a label, and the catalogue's sentences as annotations, their numbers filled
in by Prometheus' templating (``{{ $labels.Hostname }}``, ``{{ $value }}``, and ``query`` for
the other values of the same GPU).

Most rules read only dcgm-exporter's metrics and so also work on GPUs watched by NVIDIA's
dcgm-exporter; those that need gpufleet's own metrics (processes, Xid times, NVLink link
counts, host state, cost) say so in a comment. What PromQL cannot say is left out with a
comment in the output: the allow-list of processes (it lives in the app's config), and the
hysteresis bands of the temperature rules (Prometheus has one threshold; ``keep_firing_for``
stands in for the clear duration).

A rule overridden for some hosts becomes one rule for the other hosts
(``Hostname!~"a|b"``) plus one per overridden host (``Hostname="a"``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from gpufleet_sampler import protocol
from gpufleet_sampler.metric_names import COLUMN_FAMILY, alert_name

from gpufleet import __version__
from gpufleet.core.alerts.rules import Rule
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.text import catalogue

ON: Final = "on (instance, Hostname, gpu)"
BY_HOST: Final = "by (instance, Hostname)"
GPU_ARGS: Final = "$labels.Hostname $labels.gpu"
HOST_ARGS: Final = "$labels.Hostname"
# In query templates: %[1]q / %[2]q are the alert's Hostname / gpu, quoted for PromQL.
QG: Final = "Hostname=%[1]q,gpu=%[2]q"
QH: Final = "Hostname=%[1]q"


class PromRulesError(ValueError):
    """A rule that cannot be exported for a reason the user can fix (named in the text)."""


@dataclass(frozen=True)
class PromRule:
    rule_id: str
    alert: str
    expr: str
    for_s: float
    keep_firing_s: float
    severity: str
    summary: str
    description: str
    note: str = ""  # a comment above the rule (what it needs, approximations)
    override_for: str = ""  # the host of a per-host variant (a label: promtool wants them apart)


@dataclass(frozen=True)
class Skipped:
    rule_id: str
    reason: str


# --- PromQL and template helpers -----------------------------------------------------------


def _regex_literal(text: str) -> str:
    """``text`` as an RE2 literal inside a PromQL double-quoted string."""
    return re.escape(text).replace("\\", "\\\\")


def _string_literal(text: str) -> str:
    """``text`` inside a PromQL double-quoted string."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _glob_regex(patterns: Sequence[str]) -> str:
    """fnmatch-style globs as one case-insensitive RE2 alternation (PromQL string body)."""
    parts = []
    for pat in patterns:
        out = []
        for ch in pat:
            if ch == "*":
                out.append(".*")
            elif ch == "?":
                out.append(".")
            else:
                out.append(re.escape(ch))
        parts.append("".join(out))
    return ("(?i)(" + "|".join(parts) + ")").replace("\\", "\\\\")


class _Sel:
    """Builds metric selectors with the variant's host matcher (``Hostname="a"`` etc.)."""

    def __init__(self, host_matcher: str) -> None:
        self.host = host_matcher

    def __call__(self, name: str, *matchers: str) -> str:
        ms = [m for m in (*matchers, self.host) if m]
        return f"{name}{{{','.join(ms)}}}" if ms else name


def _q(expr: str, fmt: str = "%.0f", args: str = GPU_ARGS) -> str:
    """A template that runs ``expr`` (with %[1]q / %[2]q for Hostname / gpu) and prints the
    first value, or nothing when there is none."""
    return (
        f'{{{{ with printf "{expr}" {args} | query }}}}'
        f'{{{{ . | first | value | printf "{fmt}" }}}}{{{{ end }}}}'
    )


VALUE: Final = '{{ printf "%.0f" $value }}'
VALUE1: Final = '{{ printf "%.1f" $value }}'


def _num(v: Any) -> str:
    f = float(v)
    return str(int(f)) if f.is_integer() else repr(f)


def _duration(seconds: float) -> str:
    if float(seconds).is_integer():
        return f"{int(seconds)}s"
    return f"{round(seconds * 1000)}ms"


def _bits(mask: int) -> list[tuple[int, str]]:
    return [(bit, label) for bit, label, _ in protocol.REASON_BITS if mask & bit]


def _bit_set(reasons: str, bit: int) -> str:
    # PromQL has no bitwise operators: bit b is set when floor(x / b) is odd.
    return f"floor({reasons} / {bit}) % 2 == 1"


# --- one translation per condition ---------------------------------------------------------
# Each returns (expr, values for the catalogue's placeholders, note); values override the
# common ones (host, where, window).

Translation = tuple[str, dict[str, str], str]
Translator = Callable[[Rule, _Sel], Translation]
NEEDS_GPUFLEET: Final = "needs gpufleet's own metrics (either gpufleet exporter)"


def _clock_values(s: _Sel) -> dict[str, str]:
    del s
    return {
        "clock_max": _q(f"DCGM_FI_DEV_MAX_SM_CLOCK{{{QG}}}"),
        "clock_pct": _q(
            f"100 * DCGM_FI_DEV_SM_CLOCK{{{QG}}} / {ON} DCGM_FI_DEV_MAX_SM_CLOCK{{{QG}}}",
            "%.0f %%",
        ),
    }


def _thermal_throttle(r: Rule, s: _Sel) -> Translation:
    bits = _bits(int(r.params["mask"]))
    if not bits:
        raise PromRulesError(f"rule {r.id!r}: params.mask {r.params['mask']!r} names no reason")
    reasons = s("DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    cond = " or ".join(_bit_set(reasons, b) for b, _ in bits)
    expr = f"{s('DCGM_FI_DEV_SM_CLOCK')} and {ON} ({cond})"
    values = {
        "reasons": ", ".join(label for _, label in bits),
        "clock": VALUE,
        "temp": _q(f"DCGM_FI_DEV_GPU_TEMP{{{QG}}}"),
        "slowdown": _q(f"DCGM_FI_DEV_SLOWDOWN_TEMP{{{QG}}}"),
        **_clock_values(s),
    }
    return expr, values, ""


def _power_limit_low(r: Rule, s: _Sel) -> Translation:
    frac = _num(r.params["below_frac"])
    expr = (
        f"{s('DCGM_FI_DEV_ENFORCED_POWER_LIMIT')} < {ON} "
        f"{frac} * {s('DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF')}"
    )
    values = {
        "limit": VALUE,
        "default": _q(f"DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF{{{QG}}}"),
        "limit_pct": _q(
            f"100 * DCGM_FI_DEV_ENFORCED_POWER_LIMIT{{{QG}}} / {ON} "
            f"DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF{{{QG}}}",
            "%.0f %%",
        ),
        "power": _q(f"DCGM_FI_DEV_POWER_USAGE{{{QG}}}"),
    }
    return expr, values, ""


def _power_cap_active(r: Rule, s: _Sel) -> Translation:
    reasons = s("DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    expr = (
        f"{s('DCGM_FI_DEV_POWER_USAGE')} and {ON} ({_bit_set(reasons, 0x4)}) "
        f"and {ON} {s('DCGM_FI_DEV_GPU_UTIL')} >= {_num(r.params['busy_util_pct'])} "
        f"and {ON} {s('DCGM_FI_DEV_ENFORCED_POWER_LIMIT')} >= {ON} "
        f"{_num(r.params['below_frac'])} * {s('DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF')}"
    )
    values = {
        "limit": _q(f"DCGM_FI_DEV_ENFORCED_POWER_LIMIT{{{QG}}}"),
        "default": _q(f"DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF{{{QG}}}"),
        "clock": _q(f"DCGM_FI_DEV_SM_CLOCK{{{QG}}}"),
        **_clock_values(s),
    }
    return expr, values, ""


def _clocks_below_nominal(r: Rule, s: _Sel) -> Translation:
    expr = (
        f"{s('DCGM_FI_DEV_SM_CLOCK')} < {ON} {_num(r.params['below_frac'])} * "
        f"{s('DCGM_FI_DEV_MAX_SM_CLOCK')} "
        f"and {ON} {s('DCGM_FI_DEV_GPU_UTIL')} >= {_num(r.params['busy_util_pct'])} "
        # Any reason but "GPU idle" (bit 0) explains a lower clock.
        f"unless {ON} {s('DCGM_FI_DEV_CLOCKS_EVENT_REASONS')} >= 2"
    )
    values = {"clock": VALUE, "util": _q(f"DCGM_FI_DEV_GPU_UTIL{{{QG}}}"), **_clock_values(s)}
    return expr, values, ""


def _near(metric: str, limit: str) -> Translator:
    def tr(r: Rule, s: _Sel) -> Translation:
        margin = _num(r.params["margin_c"])
        expr = f"{s(metric)} >= {ON} {s(limit)} - {margin}"
        values = {"temp": VALUE, "margin": margin, "limit": _q(f"{limit}{{{QG}}}")}
        note = "no hysteresis band in Prometheus: keep_firing_for stands in for clear_for_s"
        return expr, values, note

    return tr


def _mem_temp_high(r: Rule, s: _Sel) -> Translation:
    # Against the memory's own limit where exported, else the fixed threshold.
    above = _num(r.params["above_c"])
    temp, limit = s("DCGM_FI_DEV_MEMORY_TEMP"), s("DCGM_FI_DEV_MEM_MAX_OP_TEMP")
    expr = f"({temp} >= {ON} {limit}) or ({temp} > {above} unless {ON} {limit})"
    return expr, {"temp": VALUE, "above": above}, ""


def _clock_setting_low(r: Rule, s: _Sel) -> Translation:
    bits = _bits(int(r.params["mask"]))
    if not bits:
        raise PromRulesError(f"rule {r.id!r}: params.mask {r.params['mask']!r} names no reason")
    reasons = s("DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    cond = " or ".join(_bit_set(reasons, b) for b, _ in bits)
    expr = (
        f"{s('DCGM_FI_DEV_SM_CLOCK')} < {ON} {_num(r.params['below_frac'])} * "
        f"{s('DCGM_FI_DEV_MAX_SM_CLOCK')} "
        f"and {ON} {s('DCGM_FI_DEV_GPU_UTIL')} >= {_num(r.params['busy_util_pct'])} "
        f"and {ON} ({cond})"
    )
    values = {
        "reasons": ", ".join(label for _, label in bits),
        "clock": VALUE,
        "util": _q(f"DCGM_FI_DEV_GPU_UTIL{{{QG}}}"),
        **_clock_values(s),
    }
    return expr, values, ""


def _mem_nearly_full(r: Rule, s: _Sel) -> Translation:
    above = _num(r.params["above_frac"])
    # MIG slices are exported as GPUs of their own, numbered from protocol.MIG_INDEX_BASE up.
    only = 'gpu=~"[1-9][0-9][0-9]+"' if r.params.get("slices_only") else ""
    expr = f"{s('DCGM_FI_DEV_FB_USED', only)} / {ON} {s('DCGM_FI_DEV_FB_TOTAL', only)} >= {above}"
    values = {
        "mem_used": _q(f"DCGM_FI_DEV_FB_USED{{{QG}}}", "%.0f MiB"),
        "mem_total": _q(f"DCGM_FI_DEV_FB_TOTAL{{{QG}}}", "%.0f MiB"),
        "mem_pct": "{{ $value | humanizePercentage }}",
        "card_note": "",
    }
    return expr, values, "the card as a whole is not looked up here"


def _idle_billed(r: Rule, s: _Sel) -> Translation:
    util, mem = _num(r.params["util_below_pct"]), _num(r.params["mem_below_frac"])
    used = s("DCGM_FI_DEV_FB_USED")
    idle = (
        f"({s('DCGM_FI_DEV_GPU_UTIL')} < bool {util}) * {ON} "
        f"({used} / {ON} ({used} + {ON} {s('DCGM_FI_DEV_FB_FREE')}) < bool {mem})"
    )
    expr = f"min {BY_HOST} ({idle}) == 1"
    values = {
        "gpus": _q(f"count(DCGM_FI_DEV_GPU_UTIL{{{QH}}})", args=HOST_ARGS),
        "util_max": util,
        "mem_max": catalogue.pct(float(r.params["mem_below_frac"])),
    }
    return expr, values, "a host is idle when every GPU is (utilization and memory used)"


def _procs_of_gpu() -> str:
    return (
        f'{{{{ with printf "gpufleet_process_gpu_memory_bytes{{{QG}}}" {GPU_ARGS} | query }}}}'
        "{{ range . }}'{{ .Labels.name }}' (PID {{ .Labels.pid }}, {{ .Labels.user }}) "
        "{{ end }}{{ end }}"
    )


def _miner_process(r: Rule, s: _Sel) -> Translation:
    names = _glob_regex([str(n) for n in r.params["names"]])
    expr = s("gpufleet_process_gpu_memory_bytes", f'name=~"{names}"')
    values = {"procs": "'{{ $labels.name }}' (PID {{ $labels.pid }}, {{ $labels.user }})"}
    note = NEEDS_GPUFLEET + "; matches process names only (not 'stratum+' command lines)"
    return expr, values, note


def _p8_with_process(r: Rule, s: _Sel) -> Translation:
    expr = (
        f"{s('DCGM_FI_DEV_PSTATE')} >= {_num(r.params['pstate_min'])} "
        f"and {ON} {s('DCGM_FI_DEV_GPU_UTIL')} >= 1 "
        f"and {ON} count by (instance, Hostname, gpu) "
        f"({s('gpufleet_process_gpu_memory_bytes')}) > 0"
    )
    return expr, {"pstate": VALUE, "procs": _procs_of_gpu()}, NEEDS_GPUFLEET


def _ecc_dbe_increase(r: Rule, s: _Sel) -> Translation:
    hold = _duration(float(r.params["hold_s"]))
    dbe = s("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL")
    expr = f"increase({dbe}[{hold}]) > 0"
    values = {
        "before": _q(f"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{{QG}}} offset {hold}"),
        "after": _q(f"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{{QG}}}"),
    }
    return expr, values, ""


def _flag(metric: str) -> Translator:
    def tr(r: Rule, s: _Sel) -> Translation:
        return f"{s(metric)} > 0", {}, ""

    return tr


def _xid_name_template() -> str:
    """Go template choosing the Xid's name by $labels.err_code (the catalogue's names)."""
    parts = []
    for i, (code, name) in enumerate(catalogue.XID_NAMES.items()):
        kw = "if" if i == 0 else "else if"
        parts.append(
            f'{{{{ {kw} eq $labels.err_code "{code}" }}}}{catalogue.translated("Xid", name)}'
        )
    return "".join(parts) + "{{ else }}Xid {{ $labels.err_code }}{{ end }}"


def _xid(critical: bool) -> Translator:
    def tr(r: Rule, s: _Sel) -> Translation:
        crit = [str(int(c)) for c in r.params["critical_codes"]]
        ignore = [str(int(c)) for c in r.params["ignore_codes"]]
        matchers = []
        if critical:
            codes = [c for c in crit if c not in ignore]
            matchers.append(f'err_code=~"{"|".join(codes) or "none"}"')
        elif crit or ignore:
            matchers.append(f'err_code!~"{"|".join(crit + ignore)}"')
        hold = _num(r.params["hold_s"])
        expr = f"time() - {s('gpufleet_xid_last_timestamp_seconds', *matchers)} < {hold}"
        values = {
            "xid": "{{ $labels.err_code }}",
            "xid_name": _xid_name_template(),
            "count": _q(
                f"gpufleet_xid_errors_total{{{QG},err_code=%[3]q}}",
                args=f"{GPU_ARGS} $labels.err_code",
            ),
        }
        return expr, values, NEEDS_GPUFLEET

    return tr


def _gpu_lost(r: Rule, s: _Sel) -> Translation:
    return f"{s('gpufleet_gpu_lost')} == 1", {}, NEEDS_GPUFLEET


def _pcie_downtrained(r: Rule, s: _Sel) -> Translation:
    gen, width = s("DCGM_FI_DEV_PCIE_LINK_GEN"), s("DCGM_FI_DEV_PCIE_LINK_WIDTH")
    expr = (
        f"({gen} < {ON} {s('DCGM_FI_DEV_PCIE_MAX_LINK_GEN')} "
        f"or {width} < {ON} {s('DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH')}) "
        f"and {ON} {s('DCGM_FI_DEV_GPU_UTIL')} >= {_num(r.params['busy_util_pct'])} "
        f"and {ON} {s('DCGM_FI_DEV_PSTATE')} <= {_num(r.params['pstate_max'])}"
    )
    values = {
        "gen": _q(f"DCGM_FI_DEV_PCIE_LINK_GEN{{{QG}}}"),
        "width": _q(f"DCGM_FI_DEV_PCIE_LINK_WIDTH{{{QG}}}"),
        "max_gen": _q(f"DCGM_FI_DEV_PCIE_MAX_LINK_GEN{{{QG}}}"),
        "max_width": _q(f"DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH{{{QG}}}"),
    }
    return expr, values, ""


def _pcie_replays(r: Rule, s: _Sel) -> Translation:
    window = _duration(float(r.params["window_s"]))
    expr = (
        f"increase({s('DCGM_FI_DEV_PCIE_REPLAY_COUNTER')}[{window}]) "
        f">= {_num(r.params['min_replays'])}"
    )
    values = {
        "replays": VALUE,
        "replay_window": window,
        "gen": _q(f"DCGM_FI_DEV_PCIE_LINK_GEN{{{QG}}}"),
        "width": _q(f"DCGM_FI_DEV_PCIE_LINK_WIDTH{{{QG}}}"),
    }
    return expr, values, ""


def _nvlink_down(r: Rule, s: _Sel) -> Translation:
    expr = f"{s('gpufleet_nvlink_links_up')} < {ON} {s('gpufleet_nvlink_links')}"
    return expr, {"up": VALUE, "links": _q(f"gpufleet_nvlink_links{{{QG}}}")}, NEEDS_GPUFLEET


def _nvlink_slow(r: Rule, s: _Sel) -> Translation:
    # Against the host's other GPUs (their median), never against nominal alone: a healthy
    # all-reduce carries 30-40 % of nominal on every GPU.
    both = s("", '__name__=~"DCGM_FI_PROF_NVLINK_(TX|RX)_BYTES"')
    traffic = f"max by (instance, Hostname, gpu) ({both})"
    peers = f"quantile by (instance, Hostname) (0.5, {traffic})"
    expr = (
        f"{traffic} < on (instance, Hostname) group_left () "
        f"({_num(r.params['below_frac'])} * ({peers} >= {_num(r.params['min_traffic_bps'])}))"
    )
    values = {"bw": "{{ humanize $value }}B/s"}
    note = "compares with the host's median GPU; the dead-lane and error checks need the app"
    return expr, values, note


def _host_unreachable(r: Rule, s: _Sel) -> Translation:
    state = (
        f'{{{{ with printf "gpufleet_host_state{{{QH}}}" {HOST_ARGS} | query }}}}'
        '{{ . | first | label "state" }}{{ end }}'
    )
    values = {"status": state, "reason": "gpufleet_host_up = 0"}
    return f"{s('gpufleet_host_up')} == 0", values, "needs the app's fleet exporter"


def _sampler_stalled(r: Rule, s: _Sel) -> Translation:
    stall = _num(r.params["stall_s"])
    expr = f"time() - {s('gpufleet_last_sample_timestamp_seconds')} > {stall}"
    return expr, {"gap": "{{ humanizeDuration $value }}"}, NEEDS_GPUFLEET


def _budget(r: Rule, s: _Sel) -> Translation:
    expr = f"{s('gpufleet_cost_budget_used_ratio')} >= {_num(r.params['frac'])}"
    values = {
        "budget_pct": "{{ humanizePercentage $value }}",
        "used": _q(f"gpufleet_cost_total{{{QH}}}", "%.2f", HOST_ARGS),
        "budget": _q(
            f"gpufleet_cost_total{{{QH}}} / on (Hostname) gpufleet_cost_budget_used_ratio{{{QH}}}",
            "%.2f",
            HOST_ARGS,
        ),
    }
    return expr, values, "needs the app's fleet exporter"


def _metric(op: str, key: str) -> Translator:
    def tr(r: Rule, s: _Sel) -> Translation:
        column = str(r.params["metric"])
        fam = COLUMN_FAMILY.get(column)
        if fam is None:
            known = ", ".join(sorted(COLUMN_FAMILY))
            raise PromRulesError(
                f"rule {r.id!r}: metric {column!r} has no Prometheus name (known: {known})"
            )
        threshold = float(r.params[key]) * fam.scale
        expr = f"{s(fam.name)} {op} {_num(threshold)}"
        values = {"metric": fam.name, "value": "{{ $value }}", "threshold": _num(threshold)}
        return expr, values, f"{column} is {fam.name} in Prometheus (scaled by {fam.scale:g})"

    return tr


TRANSLATORS: Final[dict[str, Translator]] = {
    "thermal_throttle": _thermal_throttle,
    "hw_slowdown": _thermal_throttle,  # the same shape: reason bits held, with the clock
    "clock_setting_low": _clock_setting_low,
    "power_limit_low": _power_limit_low,
    "power_cap_active": _power_cap_active,
    "clocks_below_nominal": _clocks_below_nominal,
    "temp_near_slowdown": _near("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_SLOWDOWN_TEMP"),
    "mem_temp_near_max": _near("DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_MEM_MAX_OP_TEMP"),
    "mem_temp_high": _mem_temp_high,
    "idle_billed": _idle_billed,
    "mem_nearly_full": _mem_nearly_full,
    "miner_process": _miner_process,
    "p8_with_process": _p8_with_process,
    "ecc_dbe_increase": _ecc_dbe_increase,
    "remap_pending": _flag("DCGM_FI_DEV_ROW_REMAP_PENDING"),
    "remap_failed": _flag("DCGM_FI_DEV_ROW_REMAP_FAILURE"),
    "retired_pending": _flag("DCGM_FI_DEV_RETIRED_PENDING"),
    "gpu_lost": _gpu_lost,
    "pcie_downtrained": _pcie_downtrained,
    "pcie_replays": _pcie_replays,
    "nvlink_down": _nvlink_down,
    "nvlink_slow": _nvlink_slow,
    "host_unreachable": _host_unreachable,
    "sampler_stalled": _sampler_stalled,
    "budget": _budget,
    "metric_above": _metric(">", "above"),
    "metric_below": _metric("<", "below"),
    "xid": _xid(True),  # split in two by _one: critical codes, and the others
}
HOST_SCOPE: Final = frozenset({"idle_billed", "host_unreachable", "sampler_stalled", "budget"})
UNSUPPORTED: Final[dict[str, str]] = {
    "foreign_process": "needs each host's allow-list of process names, which lives in the "
    "app's config, not in Prometheus",
    "mem_unaccounted": "needs each process's GPU memory, which DCGM does not export",
    "sampler_restarted": "a restart shows in the sampler's hello (its run_id), not in metrics",
    "watchdog": "the instance's watchdog speaks in the sampler's events, which are not metrics",
}


# --- rules -> PromRules --------------------------------------------------------------------


class _Values(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


def _sentences(
    r: Rule, gpu_scope: bool, values: Mapping[str, str], xid_critical: bool = True
) -> tuple[str, str]:
    text = catalogue.ALERT_TEXT.get(r.condition)

    def place(start: bool) -> str:
        if not gpu_scope:
            return catalogue.where(None, start)
        return catalogue.where(0, start).replace("0", "{{ $labels.gpu }}")

    common = {
        "host": "{{ $labels.Hostname }}",
        "where": place(False),
        "Where": place(True),
        "window": catalogue.duration(r.for_s),
    }
    fill = _Values({**common, **values})
    if text is None:
        return f"{r.id} on {{{{ $labels.Hostname }}}}", r.description or r.id
    title, what, _cost, todo = text
    if r.condition == "xid":
        todo = catalogue.XID_TODO_CRITICAL if xid_critical else catalogue.XID_TODO_APP
    parts = [catalogue.translated("Alerts", what).format_map(fill)]
    if todo:
        parts.append(catalogue.translated("Alerts", todo).format_map(fill))
    summary = "{{ $labels.Hostname }}: " + catalogue.translated("Alerts", title).format_map(fill)
    return summary, " ".join(p.strip() for p in parts if p.strip())


def _one(r: Rule, host_matcher: str, override_for: str) -> list[PromRule]:
    if r.condition == "xid":
        # One rule per severity: Prometheus labels cannot depend on the Xid code.
        out = [
            _build(r, host_matcher, _xid(True), "critical", ""),
            _build(r, host_matcher, _xid(False), "warning", "Other"),
        ]
    else:
        out = [_build(r, host_matcher, TRANSLATORS[r.condition], r.severity, "")]
    return [replace(p, override_for=override_for) for p in out]


def _build(
    r: Rule, host_matcher: str, translator: Translator, severity: str, suffix: str
) -> PromRule:
    expr, values, note = translator(r, _Sel(host_matcher))
    summary, description = _sentences(
        r, r.condition not in HOST_SCOPE, values, xid_critical=severity == "critical"
    )
    return PromRule(
        rule_id=r.id,
        alert=alert_name(r.id) + suffix,
        expr=expr,
        for_s=r.for_s,
        keep_firing_s=r.clear_for_s,
        severity=severity,
        summary=summary,
        description=description,
        note=note,
    )


def prom_rules(
    rules: Sequence[Rule], hosts: Sequence[HostConfig] = ()
) -> tuple[list[PromRule], list[Skipped]]:
    """The Prometheus rules for ``rules`` (with host overrides), and what was skipped."""
    out: list[PromRule] = []
    skipped: list[Skipped] = []
    by_name = {h.name: h for h in hosts}
    for r in rules:
        if r.condition in UNSUPPORTED:
            skipped.append(Skipped(r.id, UNSUPPORTED[r.condition]))
            continue
        if r.condition not in TRANSLATORS:
            skipped.append(Skipped(r.id, f"condition {r.condition!r} has no PromQL form"))
            continue
        special = sorted(set(r.hosts) | {h.name for h in hosts if r.id in h.rule_overrides})
        variants: list[tuple[Rule, str, str]] = []
        if special:
            alt = "|".join(_regex_literal(n) for n in special)
            variants.append((r, f'Hostname!~"{alt}"', ""))
            for name in special:
                rule = r.for_host(by_name.get(name), name)
                variants.append((rule, f'Hostname="{_string_literal(name)}"', name))
        else:
            variants.append((r, "", ""))
        for rule, matcher, override_for in variants:
            if not rule.enabled:
                where = f" for {matcher}" if matcher else ""
                skipped.append(Skipped(r.id, f"disabled{where}"))
                continue
            try:
                out.extend(_one(rule, matcher, override_for))
            except PromRulesError as e:
                skipped.append(Skipped(r.id, str(e)))
    return out, skipped


# --- YAML ----------------------------------------------------------------------------------


def _s(text: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are YAML's)."""
    return json.dumps(text, ensure_ascii=False)


def to_yaml(rules: Sequence[PromRule], skipped: Sequence[Skipped], source: str = "") -> str:
    lines = [
        f"# Prometheus alerting rules generated by gpufleet {__version__} "
        "(`gpufleet rules export --format prometheus`)",
        f"# from {source or 'the shipped rules'}.",
        "# Load with `rule_files:` in prometheus.yml; keep_firing_for needs Prometheus >= 2.42.",
        "# They read the metrics of `gpufleet_sampler exporter` and `gpufleet serve-metrics`;",
        "# rules without a 'needs' note work on NVIDIA dcgm-exporter's metrics too.",
    ]
    for sk in skipped:
        lines.append(f"# skipped {sk.rule_id}: {sk.reason}")
    lines += ["groups:", "  - name: gpufleet", "    rules:"]
    for pr in rules:
        if pr.note:
            lines.append(f"      # {pr.rule_id}: {pr.note}")
        lines.append(f"      - alert: {pr.alert}")
        lines.append(f"        expr: {_s(pr.expr)}")
        if pr.for_s > 0:
            lines.append(f"        for: {_duration(pr.for_s)}")
        if pr.keep_firing_s > 0:
            lines.append(f"        keep_firing_for: {_duration(pr.keep_firing_s)}")
        lines += [
            "        labels:",
            f"          severity: {_s(pr.severity)}",
            f"          rule_id: {_s(pr.rule_id)}",
        ]
        if pr.override_for:
            lines.append(f"          override_for: {_s(pr.override_for)}")
        lines += [
            "        annotations:",
            f"          summary: {_s(pr.summary)}",
            f"          description: {_s(pr.description)}",
        ]
    return "\n".join(lines) + "\n"


def export_prometheus(
    rules: Sequence[Rule], hosts: Sequence[HostConfig] = (), source: str = ""
) -> str:
    """The rules file text for Prometheus (see the module docstring)."""
    prs, skipped = prom_rules(rules, hosts)
    return to_yaml(prs, skipped, source)
