"""What a finding says: the start-of-rental health check's and a diagnosis' findings, keyed
by (finding id, verdict), and the verdict's name.

Findings leave the core as data (``gpufleet.core.model.findings.Finding``); this module turns
them into sentences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from gpufleet.core.model.findings import Finding
from gpufleet.core.text.format import (
    bytes_h,
    clock_time,
    duration,
    num,
    pct,
    procs_text,
    rate_h,
    where,
)
from gpufleet.core.text.reasons import held_by, reason_name, xid_name
from gpufleet.core.text.sanitize import clean
from gpufleet.core.text.translate import QT_TRANSLATE_NOOP, fill, translated

# Later text modules (``text.judgment``) add the values of their findings through this.
FINDING_VALUE_HOOKS: Final[list[Callable[[Finding], Mapping[str, Any]]]] = []

# Keyed by (finding id, verdict); "*" matches any verdict.

FINDING_TEXT: Final[dict[tuple[str, str], str]] = {
    ("driver", "*"): QT_TRANSLATE_NOOP(
        "Findings", "Driver {driver_version}, CUDA {cuda_version}{gpu_names}."
    ),
    ("persistence_mode", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: persistence mode is on."),
    ("persistence_mode", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: persistence mode is off, so every CUDA start and nvidia-smi call re-initializes "
        "the GPU (slow). Ask the provider, or run 'sudo nvidia-smi -pm 1' if you may.",
    ),
    ("pstate", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: P-state P{pstate}, as expected."),
    ("pstate", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: in P{pstate} (its idle power state) although a process is running on it: the "
        "driver or the job has a problem.",
    ),
    ("power_limit", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: power limit {limit} W, the card's default ({default} W)."
    ),
    ("power_limit", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: power limited to {limit} W against its default of {default} W ({limit_pct}): "
        "this instance will be slower than the same card elsewhere. Save this and ask the "
        "provider for the full limit or another instance.",
    ),
    ("temperature", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: {temp} °C, well under its slowdown temperature ({slowdown} °C)."
    ),
    ("temperature", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: already {temp} °C {load} (slowdown at {slowdown} °C): poor cooling, expect "
        "throttling under load.",
    ),
    ("temperature", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {temp} °C, at or near its slowdown temperature ({slowdown} °C): it will "
        "throttle. Ask for another instance.",
    ),
    ("mem_temperature", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: memory at {temp} °C (limit {limit} °C)."
    ),
    ("mem_temperature", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: memory already at {temp} °C (limit {limit} °C): watch it under load.",
    ),
    ("mem_temperature", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: memory at {temp} °C, over 100 °C: risk of errors and damage. Change instance.",
    ),
    ("processes", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: no other process uses it."),
    ("processes", "yours"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: only your own processes use it: {procs}."
    ),
    ("processes", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {procs} already use it ({mem} of memory). Leftover jobs or someone else's: "
        "check before you start.",
    ),
    ("processes", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {procs} looks like a mining program. Kill it, change the password and keys, "
        "and tell the provider.",
    ),
    ("not_here", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {mem} of memory is held by {count} process(es) that are not in this "
        "container (another tenant or the host): NVML reports them, but they cannot be seen or "
        "killed from here. If it stays taken, ask the provider.",
    ),
    ("orphans", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {procs} still hold the GPU after their job ended: the next job may run out "
        "of memory. End them with Kill tree… in the window or gpufleet kill --tree.",
    ),
    ("where", "container"): QT_TRANSLATE_NOOP(
        "Findings",
        "The sampler runs in a container with its own PID namespace: NVML reports the host's "
        "PIDs, so GPU processes are matched to this container's by the device files they hold.",
    ),
    ("where", "container_host_pids"): QT_TRANSLATE_NOOP(
        "Findings",
        "The sampler runs in a container that shares the host's PID namespace: NVML's PIDs "
        "are the processes'.",
    ),
    ("where", "host"): QT_TRANSLATE_NOOP(
        "Findings",
        "The sampler runs on the host itself (bare metal or a VM): NVML's PIDs are the processes'.",
    ),
    ("pcie_link", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: PCIe Gen{gen} x{width} (max Gen{max_gen} x{max_width}){idle_note}."
    ),
    ("pcie_link", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: PCIe link at Gen{gen} x{width} against a maximum of Gen{max_gen} x{max_width}: "
        "transfers will be slower. Ask the provider to check the slot.",
    ),
    ("nvlink", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: all {links} NVLink links up."),
    ("nvlink", "fail"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: only {up} of {links} NVLink links are up. Report it to the provider."
    ),
    ("ecc", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: no ECC errors."),
    ("ecc", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: a history of memory errors ({sbe} corrected, {dbe_agg} uncorrected over its "
        "life): usable, but watch it.",
    ),
    ("ecc", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {dbe} uncorrectable ECC error(s) since the driver loaded: results on this GPU "
        "may be wrong. Ask for another instance.",
    ),
    ("ecc", "unsupported"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: ECC is not reported (off, or not supported on this board)."
    ),
    ("remapped_rows", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: no memory rows remapped."),
    ("remapped_rows", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {corr} memory row(s) remapped after correctable errors, {unc} after "
        "uncorrectable ones: the board has a history; usable.",
    ),
    ("remapped_rows", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: a row remapping is {state}: the GPU needs {fix}. Ask the provider before you "
        "start.",
    ),
    ("retired_pages", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: no retired pages pending."),
    ("retired_pages", "fail"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: memory pages wait to be retired: the GPU needs a reset first."
    ),
    ("xid", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: no Xid error seen since {since}."),
    ("xid", "unknown"): QT_TRANSLATE_NOOP(
        "Findings",
        "Xid errors could not be checked: no sampler daemon has been watching this host yet "
        "(from now on they are recorded).",
    ),
    ("xid", "warn"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: Xid {xids} seen ({xid_names}): usually application faults."
    ),
    ("xid", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: Xid {xids} seen ({xid_names}): a hardware or driver fault. Ask for another "
        "instance.",
    ),
    ("gpu_lost", "fail"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: lost (it does not answer the driver). The instance needs a reboot."
    ),
    ("reserved_memory", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: {usable} of {total} memory usable ({reserved} reserved)."
    ),
    ("reserved_memory", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {reserved} of its {total} memory ({reserved_pct}) is reserved by the driver or "
        "the virtualization layer: a model sized for the full card will run out of memory.",
    ),
    ("hidden_memory", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: the memory in use is held by the processes listed."
    ),
    ("hidden_memory", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {hidden} of its memory is in use ({used} used) but the processes you can see "
        "hold only {held}: another tenant, a hidden reservation or a leaked context. Your job "
        "has that much less memory.",
    ),
    ("virtualization", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: virtualization {mode}: the sensors are the card's own."
    ),
    ("virtualization", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: a vGPU guest: some sensors (temperature, power, clocks reasons) may be hidden "
        "or shared with other tenants.",
    ),
    ("mig", "info"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: MIG is enabled: you see a slice of the GPU, not all of it."
    ),
    # Diagnosis.
    ("diag_thermal", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} was slowed by temperature for {share} of the window: its SM clock averaged "
        "{clock} MHz ({clock_pct} of {clock_max} MHz) at up to {temp} °C (slowdown {slowdown} "
        "°C). That alone makes it about {lost_pct} slower: check the cooling or change instance.",
    ),
    ("diag_power_limit", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} is power limited to {limit} W against its default {default} W ({limit_pct}); "
        "its clocks averaged {clock_pct} of maximum while busy. Ask the provider for the full "
        "limit.",
    ),
    ("diag_power_limit", "not_binding"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} is power limited to {limit} W against its default {default} W ({limit_pct}), "
        "but it drew {power} W on average while busy and the power-cap reason was rarely set: "
        "the limit did not slow this job (it would slow a heavier one).",
    ),
    ("diag_throttled", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}'s clocks were held down by a limit for {share} of the busy time ({held} of "
        "{span}): {held_by}.",
    ),
    ("diag_hw_slowdown", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} was held down by its hardware {hw_kind} for {share} of the busy time (clocks "
        "averaged {clock_pct} of maximum): a fault of the machine's power supply or cooling, "
        "not of your job. Report it to the provider with this evidence.",
    ),
    ("diag_clock_setting", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} ran at {clock_pct} of its maximum clock for {share} of the busy time because "
        "of a setting ({reasons}): reset applications clocks ('sudo nvidia-smi -rac') or ask "
        "the provider.",
    ),
    ("diag_hidden_memory", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {hidden} of its memory ({hidden_pct} of the card) was in use but held by no "
        "process you can see: another tenant, a reservation of the virtualization layer or a "
        "leaked context. Your job has that much less memory than the card's size says.",
    ),
    ("diag_power_cap", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} held its clocks down to stay within its default power limit for {share} of the "
        "busy time (clocks averaged {clock_pct} of maximum): normal for a heavy load.",
    ),
    ("diag_clocks_unexplained", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} ran at {clock_pct} of its maximum clock while busy for {share} of the window "
        "with no reason reported: a limit outside the machine (virtualization host, provider) "
        "is likely. Compare with another instance.",
    ),
    ("diag_temperature", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} held {temp} °C for a minute or more against a slowdown temperature of "
        "{slowdown} °C.",
    ),
    ("diag_shared", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} was shared: {procs} ran on it besides the main job, taking up to {mem} of "
        "memory. Two jobs on one GPU both run slower.",
    ),
    ("diag_pcie", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}'s PCIe link ran at Gen{gen} x{width} instead of Gen{max_gen} x{max_width} while "
        "busy: transfers were slower.",
    ),
    ("diag_starvation", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}'s utilization went up and down {cycles} times (busy {busy_share} of the time) "
        "while PCIe carried only {pcie}: the GPU waits for data. Look at the data loader "
        "(workers, storage, preprocessing) before the hardware.",
    ),
    ("diag_mem_temp", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "Before the crash, the memory of {where} held {temp} °C for 30 s or more (limit "
        "{mem_limit} °C; rising {rise} °C over the window).",
    ),
    ("diag_ecc", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} logged {kind} memory errors at {at} ({count}): a hardware cause. Report it to "
        "the provider with this evidence.",
    ),
    ("diag_xid", "*"): QT_TRANSLATE_NOOP(
        "Findings", "At {at}, {where} reported Xid {xid} ({xid_name})."
    ),
    ("diag_lost", "*"): QT_TRANSLATE_NOOP(
        "Findings", "At {at}, {where} fell off the bus (GPU lost): the job could not survive it."
    ),
    ("diag_crash", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "At {at} the work stopped: utilization fell from {util_before} % to {util_after} % and "
        "memory from {mem_before} to {mem_after}{procs_note}.",
    ),
    ("diag_nvlink", "*"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: only {up} of {links} NVLink links were up."
    ),
    ("diag_none", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "Nothing in the hardware data explains it: clocks, power, temperatures, PCIe, memory "
        "errors and processes look normal over the window. Look at the code, the data pipeline "
        "and the checkpointing.",
    ),
    ("diag_no_data", "*"): QT_TRANSLATE_NOOP(
        "Findings", "No samples in the window: nothing to diagnose."
    ),
    # Cost advice.
    ("smaller_instance", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "Memory use peaked at {mem_peak} of the card: a smaller GPU or a shared instance would "
        "do for this job.",
    ),
    ("fractional_gpu", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "Memory use peaked at {mem_peak} of the card and the GPU works in bursts (busy about "
        "{busy_share} of the time, {cycles} cycles): a fractional (vGPU) instance would cost less.",
    ),
    # Diagnosis: how much of the GPU worked (GPM, or the power draw where there is none).
    ("diag_not_compute_bound", "gpm"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} looked busy ({util_pct} % utilization) but its SMs were active only "
        "{sm_active} % of the time ({share} of the busy window): utilization counts the time "
        "any kernel ran, not how much of the GPU it used. The kernels are too small or run "
        "one after another: raise the batch size, fuse small kernels (torch.compile, CUDA "
        "graphs) and keep the host from feeding launches one by one.",
    ),
    ("diag_not_compute_bound", "power"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} looked busy ({util_pct} % utilization) but drew only {power_pct} of its "
        "{limit} W power limit: a GPU doing full work draws near its limit, so most of it "
        "waited. This GPU has no GPM counters (SM activity); the power draw stands in. Raise "
        "the batch size or fuse small kernels, and profile (Nsight Systems) to confirm.",
    ),
    ("diag_memory_bound", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} is memory-bound: DRAM was busy {dram_active} % of the time while its SMs were "
        "active only {sm_active} % ({share} of the busy window). More FLOPs will not help: "
        "fuse element-wise operations, use fused attention kernels, keep data in lower "
        "precision, or pick a GPU with more memory bandwidth.",
    ),
    ("diag_tensor_idle", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}'s SMs worked ({sm_active} % active) but its tensor cores stayed idle "
        "({tensor_active} % active) for {share} of the busy window. In a mixed-precision job "
        "the matrix products are not reaching the tensor cores: check that autocast "
        "(bf16/fp16) covers them, that TF32 is allowed, and that the dimensions are multiples "
        "of 8.",
    ),
    ("diag_tensor_idle", "fp16"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} computed in half precision (its FP16 pipes busy {fp16_active} % of the time) "
        "but its tensor cores stayed idle ({tensor_active} % active) for {share} of the busy "
        "window: the half-precision matrix products run on the ordinary cores, several times "
        "slower. Use the library's matmul and convolution kernels (cuBLAS, cuDNN) rather than "
        "hand-written ones, and keep the dimensions multiples of 8.",
    ),
}


def finding_values(f: Finding) -> dict[str, Any]:
    v = f.values
    limit, default = v.get("power_limit_w"), v.get("power_default_w")
    total, reserved = v.get("mem_total_bytes"), v.get("mem_reserved_bytes")
    out: dict[str, Any] = {
        "where": where(f.gpu),
        "Where": where(f.gpu, start=True),
        "driver_version": v.get("driver_version") or "?",
        "cuda_version": v.get("cuda_version") or "?",
        "gpu_names": f" ({v['gpu_names']})" if v.get("gpu_names") else "",
        "pstate": num(v.get("pstate")),
        "limit": num(limit if limit is not None else v.get("limit_c")),
        "default": num(default),
        "limit_pct": pct(float(limit) / float(default) if limit is not None and default else None),
        "temp": num(v.get("temp_c")),
        "slowdown": num(v.get("temp_slowdown_c")),
        "margin": num(v.get("margin_c")),
        "load": translated("Findings", QT_TRANSLATE_NOOP("Findings", "at idle"))
        if v.get("idle")
        else translated("Findings", QT_TRANSLATE_NOOP("Findings", "under load")),
        "procs": procs_text(v.get("processes")),
        "mem": bytes_h(v.get("mem_bytes")),
        "gen": num(v.get("pcie_gen")),
        "width": num(v.get("pcie_width")),
        "max_gen": num(v.get("pcie_max_gen")),
        "max_width": num(v.get("pcie_max_width")),
        "idle_note": translated(
            "Findings",
            QT_TRANSLATE_NOOP("Findings", "; the generation drops at idle on purpose"),
        )
        if v.get("idle_note")
        else "",
        "up": num(v.get("nvlink_up")),
        "links": num(v.get("nvlink_links")),
        "sbe": num(v.get("ecc_sbe_agg")),
        "dbe": num(v.get("ecc_dbe_vol")),
        "dbe_agg": num(v.get("ecc_dbe_agg")),
        "corr": num(v.get("remapped_rows_correctable")),
        "unc": num(v.get("remapped_rows_uncorrectable")),
        "state": translated("Findings", QT_TRANSLATE_NOOP("Findings", "failed"))
        if v.get("remap_failed")
        else translated("Findings", QT_TRANSLATE_NOOP("Findings", "pending")),
        "fix": translated("Findings", QT_TRANSLATE_NOOP("Findings", "replacing"))
        if v.get("remap_failed")
        else translated("Findings", QT_TRANSLATE_NOOP("Findings", "a reset")),
        "since": clock_time(v.get("since")) if v.get("since") else "?",
        "xids": ", ".join(str(x) for x in v.get("xids") or []) or "?",
        "xid_names": "; ".join(xid_name(x) for x in v.get("xids") or []) or "?",
        "total": bytes_h(total),
        "reserved": bytes_h(reserved),
        "usable": bytes_h(float(total) - float(reserved))
        if total and reserved is not None
        else "?",
        "reserved_pct": pct(float(reserved) / float(total) if total and reserved else None),
        "mode": v.get("mode") or "?",
        # diagnosis
        "share": pct(v.get("share")),
        "busy_share": pct(v.get("busy_share")),
        "clock": num(v.get("sm_clock_mhz")),
        "clock_max": num(v.get("sm_clock_max_mhz")),
        "clock_pct": pct(v.get("clock_frac")),
        "lost_pct": pct(None if v.get("clock_frac") is None else 1.0 - float(v["clock_frac"])),
        "cycles": num(v.get("cycles")),
        "pcie": rate_h(v.get("pcie_bps")),
        "rise": num(v.get("rise_c")),
        "kind": v.get("kind") or "?",
        "count": v.get("count") or "?",
        "at": clock_time(v.get("at_t")),
        "xid": num(v.get("xid")),
        "xid_name": xid_name(v.get("xid")),
        "util_before": num(v.get("util_before")),
        "util_after": num(v.get("util_after")),
        "mem_before": bytes_h(v.get("mem_before")),
        "mem_after": bytes_h(v.get("mem_after")),
        "procs_note": translated(
            "Findings", QT_TRANSLATE_NOOP("Findings", ", and its process disappeared")
        )
        if v.get("procs_gone")
        else "",
        "mem_peak": pct(v.get("mem_peak_frac")),
        "held": duration(v.get("held_s")),
        "span": duration(v.get("span_s")),
        "held_by": held_by(v),
        "hw_kind": translated("Findings", QT_TRANSLATE_NOOP("Findings", "power brake"))
        if v.get("brake")
        else translated("Findings", QT_TRANSLATE_NOOP("Findings", "slowdown signal")),
        "reasons": ", ".join(reason_name(str(r)) for r in v.get("reasons") or []) or "?",
        "hidden": bytes_h(v.get("mem_hidden_bytes")),
        "hidden_pct": pct(v.get("hidden_frac")),
        "used": bytes_h(v.get("mem_used_bytes")),
        "mem_limit": num(v.get("limit_c")),
        # how much of the GPU worked
        "util_pct": num(v.get("util_pct")),
        "sm_active": num(v.get("sm_active_pct")),
        "tensor_active": num(v.get("tensor_active_pct")),
        "dram_active": num(v.get("dram_active_pct")),
        "power_pct": pct(v.get("power_frac")),
        "fp16_active": num(v.get("fp16_active_pct")),
    }
    if f.id in ("hidden_memory",):
        out["held"] = bytes_h(v.get("mem_procs_bytes"))
    for hook in FINDING_VALUE_HOOKS:
        out.update(hook(f))
    return out


def finding_sentence(finding: Finding) -> str:
    variant = finding.values.get("variant")
    text = (
        (FINDING_TEXT.get((finding.id, str(variant))) if variant else None)
        or FINDING_TEXT.get((finding.id, finding.verdict))
        or FINDING_TEXT.get((finding.id, "*"))
    )
    if text is None:
        vals = ", ".join(f"{k}={v}" for k, v in finding.values.items())
        return clean(f"{finding.id} ({finding.verdict}): {vals}")
    return fill("Findings", text, finding_values(finding))


def verdict_label(verdict: str) -> str:
    labels = {
        "pass": QT_TRANSLATE_NOOP("Findings", "PASS"),
        "warn": QT_TRANSLATE_NOOP("Findings", "WARN"),
        "fail": QT_TRANSLATE_NOOP("Findings", "FAIL"),
        "info": QT_TRANSLATE_NOOP("Findings", "INFO"),
        "unknown": QT_TRANSLATE_NOOP("Findings", "?"),
        "unsupported": QT_TRANSLATE_NOOP("Findings", "N/A"),
    }
    text = labels.get(verdict)
    return translated("Findings", text) if text else verdict.upper()
