"""The start-of-rental health check: verdicts on the facts the sampler's ``check`` prints.

The sampler reports facts only (``gpufleet_sampler check``: driver and CUDA versions, and per
GPU persistence mode, P-state, power limits, temperatures, PCIe link, NVLink, ECC, remapped
rows, retired pages, processes, reserved memory, virtualization, plus the Xids a running
daemon saw). This module turns them into findings, each pass / warn / fail (``info`` for
context); ``gpufleet.core.text.catalogue.finding_sentence`` words them.

Policy, in short: what makes the instance slower or wrong now fails (a power limit under the
default, an uncorrectable error since boot, a pending or failed row remap, pending page
retirement, a critical Xid, a lost GPU, NVLink down, a miner, a GPU already at its slowdown
temperature); what is a history or a risk warns (corrected errors, remapped rows, poor idle
temperature, persistence off, someone else's process, a narrow PCIe link, a large reserved
share, a vGPU guest); the rest passes.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any, Final

from gpufleet.core.alerts.conditions import MINER_NAMES, XID_CRITICAL
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.model.findings import FAIL, INFO, PASS, WARN, Finding, Verdict, worst

__all__ = ["Finding", "evaluate_check", "overall_verdict"]

POWER_BELOW_FRAC: Final = 0.95
IDLE_TEMP_WARN_C: Final = 60.0
SLOWDOWN_MARGIN_C: Final = 5.0
RESERVED_WARN_FRAC: Final = 0.05
MEM_TEMP_FAIL_C: Final = 100.0  # where the GPU reports no memory limit of its own
HIDDEN_MIN_BYTES: Final = float(2 << 30)
HIDDEN_MIN_FRAC: Final = 0.03
# nvmlGpuVirtualizationMode_t, as the NVML backend reports it, by its documented names.
VIRTUALIZATION_MODES: Final[dict[int, str]] = {
    0: "none",
    1: "passthrough",
    2: "vgpu",
    3: "host_vgpu",
    4: "host_vsga",
}


def virtualization_name(mode: Any) -> str | None:
    """NVML's integer (``nvmlDeviceGetVirtualizationMode``) or the documented name, as a
    name; None when absent."""
    if isinstance(mode, bool) or mode is None:
        return None
    if isinstance(mode, int):
        return VIRTUALIZATION_MODES.get(mode, f"mode {mode}")
    if isinstance(mode, str):
        text = mode.strip().lower()
        if text.isdigit():
            return VIRTUALIZATION_MODES.get(int(text), f"mode {text}")
        return text.removeprefix("nvml_gpu_virtualization_mode_") or None
    return None


def _n(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def _names(p: Mapping[str, Any]) -> list[str]:
    out = []
    if p.get("name"):
        out.append(str(p["name"]).lower())
    cmd = str(p.get("cmd") or "").split()
    if cmd:
        out.append(cmd[0].rsplit("/", 1)[-1].lower())
    return out


def _is_miner(p: Mapping[str, Any]) -> bool:
    if "stratum+" in str(p.get("cmd") or ""):
        return True
    return any(fnmatch.fnmatchcase(n, m) for n in _names(p) for m in MINER_NAMES)


def _allowed(p: Mapping[str, Any], allowed: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(n, a.lower()) for n in _names(p) for a in allowed)


def _gpu_findings(
    g: Mapping[str, Any], me: str | None, allowed: Sequence[str], xids: list[Mapping[str, Any]]
) -> list[Finding]:
    i = int(g.get("index", 0))
    out: list[Finding] = []

    def add(fid: str, verdict: Verdict, **values: Any) -> None:
        out.append(Finding(fid, verdict, i, values))

    verdict: Verdict  # each check's, below

    if g.get("lost"):
        add("gpu_lost", FAIL)
        return out
    util = _n(g.get("util_gpu_pct"))
    listed = [p for p in g.get("process_list") or [] if isinstance(p, Mapping)]
    # Inside a container NVML also lists processes that are not in it (another tenant, the
    # host): they are judged apart, by the memory they hold.
    away = [p for p in listed if p.get("mapping") == "not_here"]
    procs = [p for p in listed if p.get("mapping") != "not_here"]
    idle = (util is not None and util < 5.0) and not procs

    pm = g.get("persistence_mode")
    if pm is not None:
        add("persistence_mode", PASS if pm else WARN)

    pstate = _n(g.get("pstate"))
    if pstate is not None:
        stuck = pstate >= 8 and procs and (util or 0) >= 1
        add("pstate", WARN if stuck else PASS, pstate=pstate)

    limit, default = _n(g.get("power_enforced_w")), _n(g.get("power_default_w"))
    if limit is not None and default:
        low = limit < POWER_BELOW_FRAC * default
        add("power_limit", FAIL if low else PASS, power_limit_w=limit, power_default_w=default)

    temp, slow = _n(g.get("temp_gpu_c")), _n(g.get("temp_slowdown_c"))
    if temp is not None and slow:
        if temp >= slow - SLOWDOWN_MARGIN_C:
            verdict = FAIL
        elif (idle and temp >= IDLE_TEMP_WARN_C) or temp >= slow - 2 * SLOWDOWN_MARGIN_C:
            verdict = WARN
        else:
            verdict = PASS
        add("temperature", verdict, temp_c=temp, temp_slowdown_c=slow, idle=idle)

    mtemp, mmax = _n(g.get("temp_mem_c")), _n(g.get("temp_mem_max_c"))
    if mtemp is not None:
        # Against the memory's own limit where reported (95 °C on an H200), else 100 °C.
        if (mmax and mtemp >= mmax) or (not mmax and mtemp > MEM_TEMP_FAIL_C):
            verdict = FAIL
        elif mmax and mtemp >= mmax - SLOWDOWN_MARGIN_C:
            verdict = WARN
        else:
            verdict = PASS
        add("mem_temperature", verdict, temp_c=mtemp, limit_c=mmax)

    miners = [p for p in procs if _is_miner(p)]
    # Someone else's process, or (with an allow-list) one not on it; yours are fine.
    others = [
        p
        for p in procs
        if p not in miners
        and (
            (me is not None and p.get("user") not in (None, me))
            or (allowed and not _allowed(p, allowed))
        )
    ]
    if miners:
        add("processes", FAIL, processes=miners, mem_bytes=_mem(miners))
    elif others:
        add("processes", WARN, processes=others, mem_bytes=_mem(others))
    else:
        add(
            "processes",
            PASS,
            processes=procs,
            mem_bytes=_mem(procs),
            variant="yours" if procs else "",
        )

    if away:
        add("not_here", WARN, count=len(away), mem_bytes=_mem(away))
    orphans = [p for p in procs if p.get("orphan") is True]
    if orphans:
        add("orphans", WARN, processes=orphans, mem_bytes=_mem(orphans))

    gen, mgen = _n(g.get("pcie_gen")), _n(g.get("pcie_max_gen"))
    width, mwidth = _n(g.get("pcie_width")), _n(g.get("pcie_max_width"))
    if gen is not None and mgen and width is not None and mwidth:
        busy = pstate is not None and pstate <= 2 and (util or 0) >= 50
        narrow = width < mwidth
        slow_gen = gen < mgen and busy
        add(
            "pcie_link",
            WARN if narrow or slow_gen else PASS,
            pcie_gen=gen,
            pcie_width=width,
            pcie_max_gen=mgen,
            pcie_max_width=mwidth,
            idle_note=gen < mgen and not busy,
        )

    links, up = _n(g.get("nvlink_links")), _n(g.get("nvlink_up"))
    if links and up is not None:
        add("nvlink", FAIL if up < links else PASS, nvlink_up=up, nvlink_links=links)

    if g.get("ecc_mode") is None and g.get("ecc_dbe_vol") is None:
        add("ecc", PASS, variant="unsupported")
    else:
        dbe = _n(g.get("ecc_dbe_vol")) or 0.0
        sbe_agg = _n(g.get("ecc_sbe_agg")) or 0.0
        dbe_agg = _n(g.get("ecc_dbe_agg")) or 0.0
        verdict = FAIL if dbe > 0 else WARN if (sbe_agg > 0 or dbe_agg > 0) else PASS
        add("ecc", verdict, ecc_dbe_vol=dbe, ecc_sbe_agg=sbe_agg, ecc_dbe_agg=dbe_agg)

    corr, unc = g.get("remapped_rows_correctable"), g.get("remapped_rows_uncorrectable")
    pending, failed = g.get("remap_pending"), g.get("remap_failed")
    if any(v is not None for v in (corr, unc, pending, failed)):
        if pending or failed:
            verdict = FAIL
        elif (corr or 0) or (unc or 0):
            verdict = WARN
        else:
            verdict = PASS
        add(
            "remapped_rows",
            verdict,
            remapped_rows_correctable=corr or 0,
            remapped_rows_uncorrectable=unc or 0,
            remap_pending=bool(pending),
            remap_failed=bool(failed),
        )

    rp = g.get("retired_pending")
    if rp is not None:
        add("retired_pages", FAIL if rp else PASS)

    mine = [x for x in xids if x.get("gpu") == i and isinstance(x.get("code"), int)]
    if mine:
        codes = sorted({int(x["code"]) for x in mine})
        critical = any(c in XID_CRITICAL for c in codes)
        add("xid", FAIL if critical else WARN, xids=codes)

    total, reserved = _n(g.get("mem_total_bytes")), _n(g.get("mem_reserved_bytes"))
    if total and reserved is not None:
        frac = reserved / total
        add(
            "reserved_memory",
            WARN if frac > RESERVED_WARN_FRAC else PASS,
            mem_total_bytes=total,
            mem_reserved_bytes=reserved,
        )

    used = _n(g.get("mem_used_bytes"))
    process_list = g.get("process_list")
    if used is not None and total and isinstance(process_list, list):
        # Every entry NVML lists holds visible memory, in this container or not (that case
        # has its own finding): hidden is what no entry accounts for.
        mems = [_n(p.get("mem_bytes")) for p in process_list if isinstance(p, Mapping)]
        if all(m is not None for m in mems):
            held = float(sum(m or 0.0 for m in mems))
            hidden = used - held
            threshold = max(HIDDEN_MIN_BYTES, HIDDEN_MIN_FRAC * total)
            add(
                "hidden_memory",
                WARN if hidden >= threshold else PASS,
                mem_used_bytes=used,
                mem_procs_bytes=held,
                mem_hidden_bytes=hidden,
                mem_total_bytes=total,
            )

    # NVML's number (the NVML sampler) or a name (sim, nvidia-smi): one name either way.
    mode = virtualization_name(g.get("virtualization_mode"))
    if mode is not None:
        add("virtualization", WARN if mode == "vgpu" else PASS, mode=mode)
    if g.get("mig_mode"):
        add("mig", INFO)
    return out


def _mem(procs: list[Mapping[str, Any]]) -> int:
    return sum(int(p.get("mem_bytes") or 0) for p in procs)


def evaluate_check(facts: Mapping[str, Any], host: HostConfig | None = None) -> list[Finding]:
    """Findings for the facts of one ``check`` (a dict as the sampler prints it).

    Raises ``ValueError`` with a one-line message when ``facts`` is not a check result."""
    if not isinstance(facts, Mapping):
        raise ValueError("check facts must be a JSON object")
    if facts.get("kind") == "error":
        raise ValueError(f"the sampler's check failed: {facts.get('message') or 'no reason given'}")
    gpus = facts.get("gpus")
    if not isinstance(gpus, list):
        raise ValueError("check facts have no 'gpus' list (is this a gpufleet check result?)")
    host_facts = facts.get("host") if isinstance(facts.get("host"), Mapping) else {}
    assert isinstance(host_facts, Mapping)
    me = host_facts.get("user") if isinstance(host_facts.get("user"), str) else None
    allowed = list(host.allowed_processes) if host is not None else []
    names = sorted({str(g.get("name")) for g in gpus if isinstance(g, Mapping) and g.get("name")})
    out = [
        Finding(
            "driver",
            PASS,
            None,
            {
                "driver_version": facts.get("driver_version") or host_facts.get("driver_version"),
                "cuda_version": facts.get("cuda_version") or host_facts.get("cuda_version"),
                "gpu_names": f"{len(gpus)}× " + ", ".join(names) if names else "",
            },
        )
    ]
    where = host_facts.get("where")
    if isinstance(where, str):
        out.append(Finding("where", INFO, None, {"variant": where}))
    xid = facts.get("xid") if isinstance(facts.get("xid"), Mapping) else None
    xid_events: list[Mapping[str, Any]] = []
    if xid is None or xid.get("seen") == "unknown" or xid.get("source") == "none":
        # Not checked is not a pass: an INFO line that says why (it leaves the overall
        # verdict, and so the exit code, to what was checked).
        out.append(Finding("xid", INFO, None, {"variant": "unknown"}))
    else:
        xid_events = [e for e in xid.get("events") or [] if isinstance(e, Mapping)]
        if not xid_events:
            out.append(Finding("xid", PASS, None, {"since": xid.get("since")}))
    for g in gpus:
        if isinstance(g, Mapping):
            out.extend(_gpu_findings(g, me, allowed, xid_events))
    return out


def overall_verdict(findings: Sequence[Finding]) -> str:
    """``fail`` if any finding fails, else ``warn`` if any warns, else ``pass``."""
    return worst(findings)
