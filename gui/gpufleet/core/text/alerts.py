"""What an alert says: per condition its title, what happened (with the numbers), what it
costs (at the host's price) and what to do; what each rule means; the severity's name.

Alerts leave the core as data (``gpufleet.core.model.alert.Alert``); this module turns them
into the sentences the window, the tray, the webhooks and the CLI show.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from gpufleet.core.model import evidence as rec
from gpufleet.core.model.alert import Alert
from gpufleet.core.model.evidence import values_of
from gpufleet.core.text.evidence import evidence_lines
from gpufleet.core.text.format import (
    alert_where,
    bytes_h,
    clock_time,
    duration,
    money,
    num,
    pct,
    procs_text,
    rate_h,
)
from gpufleet.core.text.reasons import held_by, reason_name, xid_name
from gpufleet.core.text.translate import QT_TRANSLATE_NOOP, fill, join_sentences, translated

# Per condition: (title, what happened, what it costs, what to do). The cost part is used
# only when the host has a price; NO_PRICE otherwise.

ALERT_TEXT: Final[dict[str, tuple[str, str, str, str]]] = {
    "thermal_throttle": (
        QT_TRANSLATE_NOOP("Alerts", "Thermal throttling on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has been slowed by its temperature ({reasons}) for {window}: its SM clock is "
            "{clock} MHz, {clock_pct} of its {clock_max} MHz maximum, at {temp} °C (slowdown at "
            "{slowdown} °C). Utilization can still read 99 %: the GPU is busy, just slower.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} "
            "an hour.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Compare with the other GPUs: if only this one is hot, its cooling is at fault. Save "
            "this evidence and ask the provider to fix the cooling or move you to another machine.",
        ),
    ),
    "hw_slowdown": (
        QT_TRANSLATE_NOOP("Alerts", "HW slowdown on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has been held down by its hardware slowdown signal ({reasons}) for "
            "{window}: its SM clock is {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, "
            "at {temp} °C and {power} W. A healthy GPU never asserts it: the board's "
            "over-temperature or power-supply protection is tripping.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} "
            "an hour.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "A fault of the machine, not of your job: save this evidence and ask the provider "
            "to check its power supply and cooling, or to move you to another machine.",
        ),
    ),
    "clock_setting_low": (
        QT_TRANSLATE_NOOP("Alerts", "Clocks held low by a setting on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is busy ({util} % utilization) but a setting ({reasons}) holds its SM "
            "clock at {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, for {window}.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} "
            "an hour.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Applications clocks or a sync boost group are set by whoever administers the "
            "machine: reset them ('sudo nvidia-smi -rac') if you may, or ask the provider.",
        ),
    ),
    "mem_unaccounted": (
        QT_TRANSLATE_NOOP("Alerts", "Memory held by no visible process on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{hidden} of the memory of {where} is in use ({used} used) but the processes you "
            "can see hold only {held}, for {window}: {hidden_pct} of the card is taken by "
            "something invisible.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Another tenant's job, a reservation of the virtualization layer or a context "
            "leaked by a killed process: your job may run out of memory sooner than the card's "
            "size says. Check for leftover processes (a reset frees a leaked context) and ask "
            "the provider.",
        ),
    ),
    "watchdog": (
        QT_TRANSLATE_NOOP("Alerts", "Watchdog on {host} will act at {deadline}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{host} has been idle while billed, and the watchdog on the instance will {act} at "
            "{deadline}{dry}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "If the job is meant to wait, cancel it (Hosts ▸ Watchdog on the selected host…, or "
            "gpufleet watchdog {host} cancel); it stands down by itself once the GPUs work again.",
        ),
    ),
    "sampler_restarted": (
        QT_TRANSLATE_NOOP("Alerts", "Sampler restarted on {host}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "gpufleet's sampler on {host} started over after {gap} without samples: the "
            "host rebooted, or the sampler was stopped or killed there. The samples of that "
            "gap are missing; recording goes on.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "If you did not reboot the host or stop the sampler, run uptime on the host: a "
            "reboot you did not ask for came from the provider or a crash; no reboot means the "
            "sampler was killed (look for it in dmesg, e.g. out of memory).",
        ),
    ),
    "power_limit_low": (
        QT_TRANSLATE_NOOP("Alerts", "Power capped below default on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is limited to {limit} W against its default of {default} W ({limit_pct} of "
            "it), drawing {power} W now. The job runs slower than the same card elsewhere.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Up to {lost_pct} slower at {price}/h: up to {waste} an hour paid for nothing.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Save the evidence (nvidia-smi -q -d POWER shows the same limit) and ask the provider "
            "for the full power limit or another instance.",
        ),
    ),
    "power_cap_active": (
        QT_TRANSLATE_NOOP("Alerts", "Power limit reached on {where} (note)"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is pulling its full {limit} W limit (default {default} W) and holds its SM "
            "clock at {clock} MHz, {clock_pct} of the {clock_max} MHz maximum, to stay within it.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "This is the card working as designed at its default limit: nothing to do.",
        ),
    ),
    "clocks_below_nominal": (
        QT_TRANSLATE_NOOP("Alerts", "Clocks below nominal on {where} with no reason"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is busy ({util} % utilization) but its SM clock is {clock} MHz, {clock_pct} "
            "of its {clock_max} MHz maximum, for {window}, and the driver reports no reason.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} "
            "an hour.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "A limit set outside this machine (the virtualization host or the provider) is the "
            "usual cause. Compare with another instance and ask the provider, with this evidence.",
        ),
    ),
    "temp_near_slowdown": (
        QT_TRANSLATE_NOOP("Alerts", "{Where} close to its slowdown temperature"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is at {temp} °C, within {margin} °C of its slowdown temperature "
            "({limit} °C), for {window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "It will start slowing down soon. If the room or its airflow is the cause, ask the "
            "provider; a cooler instance is worth more than a cheaper one.",
        ),
    ),
    "mem_temp_near_max": (
        QT_TRANSLATE_NOOP("Alerts", "Memory of {where} close to its maximum temperature"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The memory of {where} is at {temp} °C, within {margin} °C of its limit "
            "({limit} °C), for {window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Hot memory throttles and then fails. Watch for ECC errors and ask the provider to "
            "check the cooling.",
        ),
    ),
    "mem_temp_high": (
        QT_TRANSLATE_NOOP("Alerts", "Memory of {where} over {above} °C"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The memory of {where} has been at {temp} °C (over {above} °C) for {window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Memory this hot risks errors and damage: save a checkpoint, stop training, and move "
            "to another instance.",
        ),
    ),
    "idle_billed": (
        QT_TRANSLATE_NOOP("Alerts", "{host} idle while billed"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "All {gpus} GPUs of {host} have been idle for {window} (utilization under "
            "{util_max} %, memory under {mem_max} of capacity). The job has probably crashed "
            "or finished.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "That has cost {spent} so far, and costs {price} every hour it stays so.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Check the job. If it is done or dead, stop the instance (or let an action of this "
            "rule do it).",
        ),
    ),
    "foreign_process": (
        QT_TRANSLATE_NOOP("Alerts", "Unexpected process on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{procs} on {where} is not in this host's allow-list.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "If you do not recognise it, kill it and change the instance's password and keys; "
            "if it is yours, add it to the host's allowed processes.",
        ),
    ),
    "miner_process": (
        QT_TRANSLATE_NOOP("Alerts", "Mining program on {where}"),
        QT_TRANSLATE_NOOP("Alerts", "{procs} on {where} looks like a cryptocurrency miner."),
        QT_TRANSLATE_NOOP("Alerts", "It takes compute you pay {price}/h for."),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Kill it now, change the instance's password and SSH keys, and tell the provider.",
        ),
    ),
    "p8_with_process": (
        QT_TRANSLATE_NOOP("Alerts", "{Where} in P{pstate} while a process runs"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has sat in its low-power state P{pstate} for {window} while {procs} "
            "runs on it.",
        ),
        QT_TRANSLATE_NOOP("Alerts", "Every hour like this costs {price} for almost no work."),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The job is probably stuck, or the driver is. Check the job; if it persists, reset "
            "the GPU or change instance.",
        ),
    ),
    "ecc_dbe_increase": (
        QT_TRANSLATE_NOOP("Alerts", "Uncorrectable memory error on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The uncorrectable (double-bit) ECC error count of {where} rose from {before} to "
            "{after}.",
        ),
        QT_TRANSLATE_NOOP("Alerts", "If the job died, every hour until it restarts costs {price}."),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The job on this GPU may have crashed or computed garbage: restart it from the last "
            "checkpoint, save this evidence and ask the provider to check the GPU.",
        ),
    ),
    "remap_pending": (
        QT_TRANSLATE_NOOP("Alerts", "Row remapping pending on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has a memory row remapping pending: it takes effect only after a GPU reset.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Until the reset the bad row may fail again. Reset the GPU or reboot when your job "
            "allows, or ask the provider to.",
        ),
    ),
    "remap_failed": (
        QT_TRANSLATE_NOOP("Alerts", "Row remapping failed on {where}"),
        QT_TRANSLATE_NOOP("Alerts", "{Where} could not remap a failing memory row."),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "This GPU should be replaced: move to another instance and report it to the provider.",
        ),
    ),
    "retired_pending": (
        QT_TRANSLATE_NOOP("Alerts", "Page retirement pending on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{Where} has memory pages waiting to be retired at the next reset."
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts", "Reset the GPU or reboot when convenient, or ask the provider to."
        ),
    ),
    "xid": (
        QT_TRANSLATE_NOOP("Alerts", "Xid {xid} on {where}: {xid_name}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The driver reported Xid {xid} ({xid_name}) on {where} (seen {count}×).",
        ),
        QT_TRANSLATE_NOOP("Alerts", "If the job died, every hour until it restarts costs {price}."),
        "",
    ),
    "gpu_lost": (
        QT_TRANSLATE_NOOP("Alerts", "{Where} lost"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{Where} no longer answers the driver (it has fallen off the bus)."
        ),
        QT_TRANSLATE_NOOP("Alerts", "The instance still costs {price}/h with this GPU dead."),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "It needs at least a reboot. Save this evidence, report it to the provider and move "
            "your job to another instance.",
        ),
    ),
    "pcie_downtrained": (
        QT_TRANSLATE_NOOP("Alerts", "PCIe link of {where} below its maximum"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "While busy, {where}'s PCIe link runs at Gen{gen} x{width} instead of Gen{max_gen} "
            "x{max_width}, for {window}: transfers to and from the GPU are slower.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Jobs that load a lot of data suffer most. Ask the provider to reseat the card or "
            "move you; save this evidence.",
        ),
    ),
    "pcie_replays": (
        QT_TRANSLATE_NOOP("Alerts", "PCIe replays rising on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The PCIe link of {where} (Gen{gen} x{width}) retransmitted {replays} times within "
            "{replay_window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Replays are the link correcting its own errors: each one stalls transfers, and a "
            "rising count is a bad riser, slot or signal. Save the evidence and ask the "
            "provider to reseat the card or move you.",
        ),
    ),
    "nvlink_down": (
        QT_TRANSLATE_NOOP("Alerts", "NVLink link down on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "Only {up} of {links} NVLink links of {where} are up, for {window}."
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Multi-GPU communication falls back to slower paths. Save this evidence and report "
            "it to the provider.",
        ),
    ),
    "nvlink_slow": (
        QT_TRANSLATE_NOOP("Alerts", "NVLink degraded on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "NVLink of {where} carries less than the job asks of it, for {window}."
        ),
        "",
        QT_TRANSLATE_NOOP("Alerts", "Save the evidence and report it to the provider."),
    ),
    "host_unreachable": (
        QT_TRANSLATE_NOOP("Alerts", "{host} unreachable"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{host} has been unreachable for {window} ({status}: {reason})."
        ),
        QT_TRANSLATE_NOOP("Alerts", "Billing goes on meanwhile: {price}/h."),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The sampler keeps recording on the host, and the data is filled in when the link "
            "returns. Check your network, the instance's state and its SSH access.",
        ),
    ),
    "sampler_stalled": (
        QT_TRANSLATE_NOOP("Alerts", "Sampler stalled on {host}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{host} sent no sample for {gap} although the connection was up."
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The host may be overloaded or the driver hung (nvidia-smi hanging is a sign). Log "
            "in and check; a reboot may be needed.",
        ),
    ),
    "budget": (
        QT_TRANSLATE_NOOP("Alerts", "{host} has used {budget_pct} of its budget"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{host} has cost {used} of its {budget} budget ({budget_pct})."
        ),
        QT_TRANSLATE_NOOP("Alerts", "It costs {price} every further hour."),
        QT_TRANSLATE_NOOP("Alerts", "Stop the instance if the work is done, or raise the budget."),
    ),
    "metric_above": (
        QT_TRANSLATE_NOOP("Alerts", "{metric} high on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{metric} of {where} is {value}, above {threshold}, for {window}."
        ),
        "",
        "",
    ),
    "metric_below": (
        QT_TRANSLATE_NOOP("Alerts", "{metric} low on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{metric} of {where} is {value}, below {threshold}, for {window}."
        ),
        "",
        "",
    ),
    "mem_nearly_full": (
        QT_TRANSLATE_NOOP("Alerts", "Memory nearly full on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has {mem_used} of its {mem_total} in use ({mem_pct}) for {window}.{card_note}",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            'The next allocation on it fails with "CUDA out of memory": lower the batch size, '
            "or move the job to a larger slice.",
        ),
    ),
}

# Variants of an alert's text, keyed by (condition, variant); ``_alert_variant`` picks one
# from the evidence. The default is ``ALERT_TEXT``'s.
ALERT_VARIANTS: Final[dict[tuple[str, str], tuple[str, str, str, str]]] = {
    ("hw_slowdown", "brake"): (
        QT_TRANSLATE_NOOP("Alerts", "HW power brake on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has been held down by its hardware power brake ({reasons}) for {window}: "
            "its SM clock is {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, at "
            "{power} W. The brake is asserted by the machine's power supply, not by the GPU's "
            "own limit: the power delivery of this machine is failing or overloaded.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} "
            "an hour.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "A fault of the machine, not of your job: save this evidence and ask the provider "
            "to check its power supply, or to move you to another machine.",
        ),
    ),
    ("power_limit_low", "not_binding"): (
        QT_TRANSLATE_NOOP("Alerts", "Power capped below default on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is limited to {limit} W against its default of {default} W ({limit_pct} of "
            "it). It draws {power} W now, under the limit, and the power-cap reason is not "
            "set: the limit does not slow this job at the moment, but it will slow a heavier "
            "one.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Nothing is lost yet. If your work will need the full power, ask the provider for "
            "the default limit (nvidia-smi -q -d POWER shows it).",
        ),
    ),
    ("temp_near_slowdown", "over"): (
        QT_TRANSLATE_NOOP("Alerts", "{Where} at its slowdown temperature"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is at {temp} °C, at or over its slowdown temperature ({limit} °C), for "
            "{window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "It slows itself down from here on. If the room or its airflow is the cause, ask "
            "the provider; a cooler instance is worth more than a cheaper one.",
        ),
    ),
    ("mem_temp_high", "own"): (
        QT_TRANSLATE_NOOP("Alerts", "Memory of {where} at its temperature limit"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The memory of {where} has been at {temp} °C, at or over its own limit of "
            "{mem_limit} °C, for {window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Memory this hot throttles, then risks errors and damage: save a checkpoint, stop "
            "training, and move to another instance.",
        ),
    ),
    ("nvlink_slow", "peers"): (
        QT_TRANSLATE_NOOP("Alerts", "NVLink of {where} slower than its peers"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "NVLink of {where} carried {bw} against {peers_bw} on the host's other {peers} "
            "NVLink GPUs ({peer_pct} of theirs), for {window}, in the same job.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "In one collective every GPU carries about the same: a GPU at half its peers' rate "
            "has a degraded link. Save the evidence and report it to the provider.",
        ),
    ),
    ("nvlink_slow", "lane"): (
        QT_TRANSLATE_NOOP("Alerts", "Dead NVLink lane on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "NVLink link(s) {lanes} of {where} are up but carry next to nothing while its other "
            "links carry {lane_bw} each, for {window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Traffic is spread over all links: one that carries nothing is dead or degraded. "
            "Save the evidence and report it to the provider.",
        ),
    ),
    ("nvlink_slow", "errors"): (
        QT_TRANSLATE_NOOP("Alerts", "NVLink errors rising on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "NVLink of {where} logged {errors} errors (CRC, replay, recovery) within "
            "{errors_window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Each error costs a retransmission; a rising count is a failing link or cable. Save "
            "the evidence and report it to the provider.",
        ),
    ),
    ("watchdog", "done"): (
        QT_TRANSLATE_NOOP("Alerts", "Watchdog acted on {host}"),
        QT_TRANSLATE_NOOP("Alerts", "The watchdog on {host} {acted}{dry}: {outcome}."),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Check in the provider's console that billing stopped; start the instance again "
            "when you need it, and arm the watchdog again there.",
        ),
    ),
    ("watchdog", "unready"): (
        QT_TRANSLATE_NOOP("Alerts", "Watchdog on {host} cannot act any more"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The watchdog on {host} is armed, but its action cannot run now: {outcome}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "If {host} goes idle it will stay billed. Fix the cause (a new key in the "
            "instance, a command that exists), or arm the watchdog with another action "
            "(Hosts ▸ Watchdog on the selected host…).",
        ),
    ),
    ("watchdog", "failed"): (
        QT_TRANSLATE_NOOP("Alerts", "Watchdog on {host} could not act"),
        QT_TRANSLATE_NOOP("Alerts", "The watchdog on {host} tried to {act} and failed: {outcome}."),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The instance is still billed: stop it from the provider's console, then check the "
            "watchdog's settings (Hosts ▸ Watchdog on the selected host…).",
        ),
    ),
    ("sampler_restarted", "lost"): (
        QT_TRANSLATE_NOOP("Alerts", "Sampler restarted on {host}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "gpufleet's sampler on {host} started over after {gap} without samples, and what "
            "the previous run had sampled but not yet sent is gone: that time is missing from "
            "the history.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "If you did not reboot the host or stop the sampler, run uptime on the host: a "
            "reboot you did not ask for came from the provider or a crash; no reboot means the "
            "sampler was killed (look for it in dmesg, e.g. out of memory).",
        ),
    ),
}

THROTTLE_NOTE_MIN_S: Final = 15.0
THROTTLE_NOTE: Final = QT_TRANSLATE_NOOP(
    "Alerts", "Over {window} the clocks were held down {held_share} of the time ({held_by})."
)

XID_TODO_CRITICAL: Final = QT_TRANSLATE_NOOP(
    "Alerts",
    "A hardware or driver fault: save this evidence, restart your job from its checkpoint on "
    "another GPU or instance, and report it to the provider.",
)
XID_TODO_APP: Final = QT_TRANSLATE_NOOP(
    "Alerts",
    "Usually a fault of the application (a bad memory access, a killed job): check the job's "
    "log first. If it repeats with code that ran fine elsewhere, report it.",
)
NO_PRICE: Final = QT_TRANSLATE_NOOP(
    "Alerts", "Set this host's price per hour to see what it costs."
)
ENDED: Final = QT_TRANSLATE_NOOP("Alerts", "Resolved after {duration}.")

# Conditions whose cost part matters enough to ask for a price when there is none.
_COST_RELEVANT: Final = frozenset(
    {
        "thermal_throttle",
        "hw_slowdown",
        "clock_setting_low",
        "power_limit_low",
        "clocks_below_nominal",
        "idle_billed",
        "budget",
    }
)

# What the rule means, for `gpufleet rules list` and the rule editor.
RULE_MEANINGS: Final[dict[str, str]] = {
    "thermal_throttle": QT_TRANSLATE_NOOP(
        "Rules",
        "SW or HW thermal slowdown reason bits set: the GPU slows itself down because it is hot",
    ),
    "hw_slowdown": QT_TRANSLATE_NOOP(
        "Rules",
        "HW slowdown (0x8) or HW power brake (0x80) reason set: the board's power-supply or "
        "over-temperature protection holds the clock down (a machine fault)",
    ),
    "clock_setting_low": QT_TRANSLATE_NOOP(
        "Rules",
        "busy and held well under the max clock by a setting: applications clocks (0x2), sync "
        "boost (0x10) or the display clock (0x100)",
    ),
    "mem_unaccounted": QT_TRANSLATE_NOOP(
        "Rules",
        "memory in use that no listed process holds (used minus the processes' memory): "
        "another tenant, a hidden reservation, a leaked context",
    ),
    "sampler_restarted": QT_TRANSLATE_NOOP(
        "Rules", "the sampler started a new run (a new run_id): the daemon or the host restarted"
    ),
    # One condition, three shipped rules: each its own meaning (by rule id).
    "watchdog_pending": QT_TRANSLATE_NOOP(
        "Rules", "the instance's own watchdog will act on the idle, billed host unless cancelled"
    ),
    "watchdog_acted": QT_TRANSLATE_NOOP(
        "Rules", "the instance's own watchdog acted: stopped, powered off or ran your command"
    ),
    "watchdog_unready": QT_TRANSLATE_NOOP(
        "Rules", "the instance's own watchdog is armed but its action cannot run any more"
    ),
    "watchdog_failed": QT_TRANSLATE_NOOP(
        "Rules", "the instance's own watchdog failed to act: the host is still billed"
    ),
    "watchdog": QT_TRANSLATE_NOOP(
        "Rules", "what the instance's own watchdog said last: it will act, it acted, it failed"
    ),
    "power_limit_low": QT_TRANSLATE_NOOP(
        "Rules", "enforced power limit below the card's default (e.g. 300 W against 450 W)"
    ),
    "power_cap_active": QT_TRANSLATE_NOOP(
        "Rules", "power-cap reason while busy at the default limit: working as designed (a note)"
    ),
    "clocks_below_nominal": QT_TRANSLATE_NOOP(
        "Rules", "busy, SM clock well under its maximum, and no reason reported"
    ),
    "temp_near_slowdown": QT_TRANSLATE_NOOP(
        "Rules", "GPU temperature within a few degrees of its slowdown threshold"
    ),
    "mem_temp_near_max": QT_TRANSLATE_NOOP(
        "Rules", "memory temperature within a few degrees of its maximum"
    ),
    "mem_temp_high": QT_TRANSLATE_NOOP(
        "Rules",
        "memory temperature at its own limit (NVML's MEM_MAX threshold), or over 100 °C where "
        "no limit is reported",
    ),
    "idle_billed": QT_TRANSLATE_NOOP(
        "Rules", "every GPU under 5 % utilization and 10 % memory: paying for an idle host"
    ),
    "foreign_process": QT_TRANSLATE_NOOP(
        "Rules", "a process not in the host's allow-list uses a GPU"
    ),
    "miner_process": QT_TRANSLATE_NOOP("Rules", "a well-known mining program uses a GPU"),
    "p8_with_process": QT_TRANSLATE_NOOP(
        "Rules", "GPU in its idle P-state (P8) while a process works on it"
    ),
    "ecc_dbe_increase": QT_TRANSLATE_NOOP(
        "Rules", "the uncorrectable (double-bit) ECC error count increased"
    ),
    "remap_pending": QT_TRANSLATE_NOOP("Rules", "a memory row remapping waits for a GPU reset"),
    "remap_failed": QT_TRANSLATE_NOOP("Rules", "a memory row remapping failed"),
    "retired_pending": QT_TRANSLATE_NOOP(
        "Rules", "memory pages wait to be retired at the next reset"
    ),
    "xid": QT_TRANSLATE_NOOP(
        "Rules",
        "the driver reported an Xid error (critical codes named: 48, 63, 64, 74, 79, 92, 94, "
        "95, 119, 120, ...)",
    ),
    "gpu_lost": QT_TRANSLATE_NOOP("Rules", "a GPU stopped answering (fell off the bus)"),
    "pcie_downtrained": QT_TRANSLATE_NOOP(
        "Rules", "PCIe link below its max generation or width while busy (not at idle P-states)"
    ),
    "nvlink_down": QT_TRANSLATE_NOOP("Rules", "fewer NVLink links up than the GPU has"),
    "pcie_replays": QT_TRANSLATE_NOOP(
        "Rules", "the PCIe replay counter rising (retransmissions on the link), not its total"
    ),
    "nvlink_slow": QT_TRANSLATE_NOOP(
        "Rules",
        "NVLink carrying under half what the host's other GPUs carry, a link up but idle while "
        "its siblings are busy, or rising NVLink error counters (never nominal alone)",
    ),
    "host_unreachable": QT_TRANSLATE_NOOP("Rules", "the host cannot be reached over SSH"),
    "sampler_stalled": QT_TRANSLATE_NOOP(
        "Rules",
        "no sample from the host's sampler although the link is up and it did not restart",
    ),
    "budget": QT_TRANSLATE_NOOP("Rules", "the host's cost reached a share of its budget"),
    "metric_above": QT_TRANSLATE_NOOP("Rules", "a metric above a threshold (user rule)"),
    "metric_below": QT_TRANSLATE_NOOP("Rules", "a metric below a threshold (user rule)"),
    "mem_nearly_full": QT_TRANSLATE_NOOP(
        "Rules", "memory used above a share of its own capacity (a MIG slice: of the slice's)"
    ),
}


def rule_meaning(condition: str, rule_id: str = "") -> str:
    """What a rule watches for: its own words where one condition serves several shipped
    rules, else its condition's."""
    text = RULE_MEANINGS.get(rule_id) or RULE_MEANINGS.get(condition)
    return translated("Rules", text) if text else condition


def held_s(alert: Alert, now: float | None) -> float | None:
    """How long a firing alert's condition has held at ``now`` (from when it first held,
    ``since_t``, else the for-duration before it fired); None without a ``now`` or once
    resolved: then the sentence says the for-duration it fired after."""
    if now is None or alert.state != "firing":
        return None
    ev = alert.evidence
    window = float(ev.get("window_s") or 0.0)
    since = ev.get("since_t")
    start = float(since) if isinstance(since, int | float) else alert.started_t - window
    return max(window, now - start)


def alert_values(alert: Alert, now: float | None = None) -> dict[str, Any]:
    """The placeholders of an alert's sentences, formatted for display; with ``now``, a
    firing alert's {window} is how long it has held so far (what the alert list counts),
    not the for-duration it fired after."""
    ev = alert.evidence
    v: Mapping[str, Any] = ev.get("values") or {}
    th: Mapping[str, Any] = ev.get("thresholds") or {}
    window_s = ev.get("window_s")
    cur = str(ev.get("currency") or "USD")
    price = ev.get("price_per_hour")
    out: dict[str, Any] = {
        "host": alert.host,
        "where": alert_where(alert.host, alert.gpu),
        "Where": alert_where(alert.host, alert.gpu, start=True),
        "window": duration(held if (held := held_s(alert, now)) is not None else window_s),
        "price": money(price, cur),
    }
    lim = _limits(alert, th)
    clock, cmax = v.get("sm_clock_mhz"), v.get("sm_clock_max_mhz")
    clock_frac = float(clock) / float(cmax) if clock is not None and cmax else None
    out.update(
        clock=num(clock),
        clock_max=num(cmax),
        clock_pct=pct(clock_frac),
        temp=num(lim.temp),
        slowdown=num(v.get("temp_slowdown_c")),
        reasons=", ".join(reason_name(str(r)) for r in v.get("reasons") or []) or "?",
        util=num(v.get("util_gpu_pct")),
        power=num(v.get("power_w")),
        limit=num(lim.limit),
        default=num(v.get("power_default_w")),
        margin=num(th.get("margin_c")),
        above=num(lim.above),
        procs=procs_text(v.get("processes")),
        pstate=num(v.get("pstate")),
        before=num(v.get("ecc_dbe_before")),
        after=num(v.get("ecc_dbe_after")),
        gen=num(v.get("pcie_gen")),
        width=num(v.get("pcie_width")),
        max_gen=num(v.get("pcie_max_gen")),
        max_width=num(v.get("pcie_max_width")),
        up=num(v.get("nvlink_up")),
        links=num(v.get("nvlink_links")),
        bw=rate_h(v.get("nvlink_bps")),
        nominal=rate_h(v.get("nvlink_nominal_bps")),
        bw_pct=pct(None if v.get("nvlink_pct") is None else float(v["nvlink_pct"]) / 100.0),
        status=v.get("status") or "?",
        reason=v.get("reason") or "?",
        gap=duration(v.get("gap_s")),
        gpus=num(v.get("gpus")),
        util_max=num(v.get("util_below_pct")),
        mem_max=pct(v.get("mem_below_frac")),
        xid=num(v.get("xid")),
        xid_name=xid_name(v.get("xid")),
        count=num(v.get("count")),
        message=v.get("message") or "",
        metric=v.get("metric") or "?",
        value=num(v.get("value"), 1),
        threshold=num(lim.threshold, 1),
        hidden=bytes_h(v.get("mem_hidden_bytes")),
        used=bytes_h(v.get("mem_used_bytes")),
        held=bytes_h(v.get("mem_procs_bytes")),
        hidden_pct=pct(v.get("hidden_frac")),
        peers_bw=rate_h(v.get("peers_bps")),
        peers=num(v.get("peers")),
        peer_pct=pct(v.get("peer_frac")),
        lanes=", ".join(str(x) for x in v.get("links_slow") or []) or "?",
        lane_bw=rate_h(v.get("link_median_bps")),
        errors=num(v.get("errors")),
        errors_window=duration(v.get("window_s")),
        mem_limit=num(v.get("limit_c")),
        replays=num(v.get("replays_rise")),
        replay_window=duration(v.get("window_s")),
        mem_used=bytes_h(v.get("mem_used_bytes")),
        mem_total=bytes_h(v.get("mem_total_bytes")),
        mem_pct=pct(v.get("used_frac")),
        card_note=translated(
            "Alerts", QT_TRANSLATE_NOOP("Alerts", " The card as a whole is at {card_pct}.")
        ).format(card_pct=pct(v.get("card_frac")))
        if v.get("card_frac") is not None
        else "",
    )
    thr = ev.get("throttle")
    # The note needs a span to speak of: "over 0 s ... 100 %" said nothing.
    if isinstance(thr, Mapping) and float(thr.get("span_s") or 0) >= THROTTLE_NOTE_MIN_S:
        out["held_share"] = pct(thr.get("share"))
        out["held_window"] = duration(thr.get("span_s"))
        out["held_by"] = held_by(thr)
    lost: float | None = None
    if alert.condition == "power_limit_low":
        pl = values_of(alert, rec.PowerLimitLowEvidence)
        limit_w, default_w = pl.get("power_limit_w"), pl.get("power_default_w")
        share = float(limit_w) / float(default_w) if limit_w is not None and default_w else None
        out["limit_pct"] = pct(share)
        # What it costs: the share of compute lost, at the host's price.
        if share is not None and limit_w and pl.get("binding", True):
            lost = max(0.0, 1.0 - share)
    elif alert.condition in _CLOCK_LOSS and clock_frac is not None:
        lost = max(0.0, 1.0 - clock_frac)
    out["lost_pct"] = pct(lost)
    out["waste"] = money(None if lost is None or price is None else lost * float(price), cur)
    if alert.condition == "idle_billed" and price is not None:
        idle_s = float(ev.get("window_s") or 0.0)
        if alert.ended_t is not None and ev.get("since_t") is not None:
            idle_s = alert.ended_t - float(ev["since_t"])
        out["spent"] = money(idle_s / 3600.0 * float(price), cur)
    if alert.condition == "watchdog":
        wd = values_of(alert, rec.WatchdogEvidence)
        action = str(wd.get("action") or "")
        out["deadline"] = clock_time(wd.get("deadline_t"))
        out["act"] = translated("Alerts", _WATCHDOG_ACT.get(action, _WATCHDOG_ACT[""]))
        out["acted"] = translated("Alerts", _WATCHDOG_ACTED.get(action, _WATCHDOG_ACTED[""]))
        out["outcome"] = str(wd.get("outcome") or "?")
        out["dry"] = (
            translated("Alerts", QT_TRANSLATE_NOOP("Alerts", " (a dry run: nothing is done)"))
            if wd.get("dry_run")
            else ""
        )
    if alert.condition == "budget":
        bud = values_of(alert, rec.BudgetEvidence)
        out["budget_pct"] = pct(bud.get("budget_frac"))
        out["used"] = money(bud.get("budget_used"), cur)
        out["budget"] = money(bud.get("budget"), cur)
    for hook in ALERT_VALUE_HOOKS:
        out.update(hook(alert))
    return out


class _Limits(NamedTuple):
    """The temperature, the limit it is held against, the level a rule fires above, and a
    user rule's threshold: which key holds each depends on the condition."""

    temp: Any = None
    limit: Any = None
    above: Any = None
    threshold: Any = None


def _limits(alert: Alert, th: Mapping[str, Any]) -> _Limits:
    above = th.get("above_c")
    match alert.condition:
        case "thermal_throttle":
            return _Limits(
                values_of(alert, rec.ThermalThrottleEvidence).get("temp_gpu_c"), None, above
            )
        case "clocks_below_nominal":
            ev_c = values_of(alert, rec.ClocksBelowNominalEvidence)
            return _Limits(ev_c.get("temp_gpu_c"), None, above)
        case "hw_slowdown":
            hw = values_of(alert, rec.HwSlowdownEvidence)
            return _Limits(hw.get("temp_gpu_c"), hw.get("power_limit_w"), above)
        case "power_limit_low":
            return _Limits(
                None, values_of(alert, rec.PowerLimitLowEvidence).get("power_limit_w"), above
            )
        case "power_cap_active":
            return _Limits(
                None, values_of(alert, rec.PowerCapActiveEvidence).get("power_limit_w"), above
            )
        case "temp_near_slowdown" | "mem_temp_near_max":
            near = values_of(alert, rec.NearLimitEvidence)
            return _Limits(near.get("temp_c"), near.get("limit_c"), above)
        case "mem_temp_high":
            mem = values_of(alert, rec.MemTempHighEvidence)
            return _Limits(mem.get("temp_mem_c"), mem.get("limit_c"), mem.get("above_c", above))
        case "metric_above":
            return _Limits(
                None, None, above, values_of(alert, rec.MetricAboveEvidence).get("above")
            )
        case "metric_below":
            return _Limits(
                None, None, above, values_of(alert, rec.MetricBelowEvidence).get("below")
            )
    if alert.condition in rec.RECORDS:
        return _Limits(above=above)  # its record has none of them
    return _plain_limits(rec.raw_values(alert), above)


def _plain_limits(v: Mapping[str, Any], above: Any) -> _Limits:
    """A condition that declares no record (a plain mapping): the first key it has."""
    return _Limits(
        v.get("temp_gpu_c", v.get("temp_c", v.get("temp_mem_c"))),
        v.get("power_limit_w", v.get("limit_c")),
        v.get("above_c", above),
        v.get("above", v.get("below")),
    )


_WATCHDOG_ACT: Final = {
    "provider": QT_TRANSLATE_NOOP("Alerts", "stop the instance through its provider"),
    "shutdown": QT_TRANSLATE_NOOP("Alerts", "power the instance off"),
    "command": QT_TRANSLATE_NOOP("Alerts", "run your command"),
    "": QT_TRANSLATE_NOOP("Alerts", "act"),
}
_WATCHDOG_ACTED: Final = {
    "provider": QT_TRANSLATE_NOOP("Alerts", "stopped the instance through its provider"),
    "shutdown": QT_TRANSLATE_NOOP("Alerts", "powered the instance off"),
    "command": QT_TRANSLATE_NOOP("Alerts", "ran your command"),
    "": QT_TRANSLATE_NOOP("Alerts", "acted"),
}

_CLOCK_LOSS: Final = frozenset(
    {"thermal_throttle", "clocks_below_nominal", "hw_slowdown", "clock_setting_low"}
)


# Later text modules (``text.judgment``) add values and pick variants of the table-driven
# sentences through these; ``OWN_TEXT`` below is for a condition that words itself whole.
ALERT_VALUE_HOOKS: Final[list[Callable[[Alert], Mapping[str, Any]]]] = []
ALERT_VARIANT_HOOKS: Final[list[Callable[[Alert], str | None]]] = []


def _alert_variant(alert: Alert) -> str | None:
    for hook in ALERT_VARIANT_HOOKS:
        variant = hook(alert)
        if variant is not None:
            return variant
    match alert.condition:
        case "hw_slowdown" if values_of(alert, rec.HwSlowdownEvidence).get("power_brake"):
            return "brake"
        case "power_limit_low" if (
            values_of(alert, rec.PowerLimitLowEvidence).get("binding") is False
        ):
            return "not_binding"
        case "temp_near_slowdown" if values_of(alert, rec.NearLimitEvidence).get("over"):
            return "over"
        case "mem_temp_high" if values_of(alert, rec.MemTempHighEvidence).get("own_limit"):
            return "own"
        case "nvlink_slow":
            variant = values_of(alert, rec.NvlinkSlowEvidence).get("variant")
            return str(variant) if variant else None
        case "sampler_restarted" if values_of(alert, rec.SamplerRestartedEvidence).get("lost"):
            return "lost"
        case "watchdog":
            state = values_of(alert, rec.WatchdogEvidence).get("state")
            return str(state) if state in ("done", "failed", "unready") else None
    return None


def _alert_text(alert: Alert) -> tuple[str, str, str, str] | None:
    variant = _alert_variant(alert)
    if variant is not None:
        text = ALERT_VARIANTS.get((alert.condition, variant))
        if text is not None:
            return text
    return ALERT_TEXT.get(alert.condition)


# Conditions whose sentences live in a module of their own (``text/provider_actions``):
# condition → (title, sentence) of (host, evidence); the module registers itself.
OWN_TEXT: dict[str, tuple[Callable[[str, Mapping[str, Any]], str], ...]] = {}


def alert_title(alert: Alert) -> str:
    """The alert's one-line title; it always names the host."""
    own = OWN_TEXT.get(alert.condition)
    if own is not None:
        return own[0](alert.host, alert.evidence)
    if alert.condition == "alertmanager":  # received from Alertmanager: its own words
        return str(alert.evidence.get("summary") or alert.rule_id)
    text = _alert_text(alert)
    if text is None:
        return f"{alert.rule_id} ({alert_where(alert.host, alert.gpu)})"
    return fill("Alerts", text[0], alert_values(alert))


def alert_sentence(alert: Alert, now: float | None = None) -> str:
    """What happened (with the numbers), what it costs (at the host's price), what to do."""
    own = OWN_TEXT.get(alert.condition)
    if own is not None:
        return own[1](alert.host, alert.evidence)
    if alert.condition == "alertmanager":  # received from Alertmanager: its own words
        ev = alert.evidence
        return str(ev.get("description") or ev.get("summary") or alert.rule_id)
    text = _alert_text(alert)
    values = alert_values(alert, now)
    if text is None:
        facts = "; ".join(evidence_lines(alert.evidence))
        return f"{alert.rule_id} on {alert.host}: {facts}"
    _title, what, cost, todo = text
    parts = [fill("Alerts", what, values)]
    if "held_share" in values:
        parts.append(fill("Alerts", THROTTLE_NOTE, {**values, "window": values["held_window"]}))
    if cost:
        if alert.evidence.get("price_per_hour") is not None:
            parts.append(fill("Alerts", cost, values))
        elif alert.condition in _COST_RELEVANT:
            parts.append(translated("Alerts", NO_PRICE))
    if alert.condition == "xid":
        critical = values_of(alert, rec.XidEvidence).get("critical")
        todo = XID_TODO_CRITICAL if critical else XID_TODO_APP
    if todo:
        parts.append(fill("Alerts", todo, values))
    if alert.ended_t is not None:
        parts.append(
            fill("Alerts", ENDED, {"duration": duration(alert.evidence.get("duration_s"))})
        )
    return join_sentences(parts)


def severity_label(severity: str) -> str:
    labels = {
        "info": QT_TRANSLATE_NOOP("Alerts", "info"),
        "warning": QT_TRANSLATE_NOOP("Alerts", "warning"),
        "critical": QT_TRANSLATE_NOOP("Alerts", "critical"),
    }
    text = labels.get(severity)
    return translated("Alerts", text) if text else severity
