"""The keys of what the sampler says beyond the sample row, defined once.

``hello`` (its header and each ``gpus`` entry), ``info``, ``check`` (its header and the ~50
facts of each GPU) and ``event`` are written by three producers: the nvml backend, the sim
backend and the laptop's nvidia-smi path (``gpufleet.core.wire.nvidia_smi``). Written by hand
in each, their key sets drifted apart (a key one had and the others lacked, ``1`` here and
``true`` there). Here each key is named once with its JSON types and meaning; every producer
builds its dicts through ``build`` (a key missing or unknown is a ``SchemaError`` at once,
not a silent gap on the laptop), the conformance test runs all three against these tables
and docs/protocol.md's tables are generated from them.

A fact a producer cannot know is ``None`` (``null``), said explicitly, never left out.

``build`` also turns NVML's numbers into the documented values where a fact is a name or a
flag (``virtualization_mode`` 1 -> "passthrough", ``persistence_mode`` 1 -> true), so every
producer says the same type whatever its source gives.

This module runs on the instance: Python 3.8, stdlib only.
"""

from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from gpufleet_sampler import protocol

# (name, JSON types joined by "|", meaning). Types: "int", "number" (an int or a float),
# "bool", "str", "list", "object", "null".
Fact = Tuple[str, str, str]


# The one-shot commands' kinds (``info``, ``check``: one object, then exit).
KIND_INFO = "info"
KIND_CHECK = "check"


class SchemaError(ValueError):
    """A message built with a key missing or a key the schema does not define."""


# ----------------------------------------------------------------------------- hello

HELLO_KEYS: Tuple[Fact, ...] = (
    ("kind", "str", '"hello"'),
    ("protocol", "int", "protocol version"),
    ("sampler_version", "str", '`gpufleet_sampler.__version__` ("nvidia-smi" on that path)'),
    ("run_id", "str", "32 hex digits (uuid4), new each time the sampler starts"),
    ("backend", "str", '"nvml" | "sim" | "nvidia-smi"'),
    ("scenario", "str|null", "sim scenario name, null for the others"),
    ("interval_s", "number", "seconds between `sample`s"),
    ("columns", "list", "`{name, unit}` of each sample column, in wire order"),
    ("host", "object", "facts about the instance"),
    ("gpus", "list", "one entry per GPU, then its MIG slices"),
)
# Keys some producers add: the sampler's loop (procs_interval_s, link_columns,
# links_interval_s), nvml (cpu_budget), a daemon with the watchdog armed, nvidia-smi (limits).
HELLO_OPTIONAL: Tuple[Fact, ...] = (
    ("procs_interval_s", "number", "seconds between `procs` messages (the sampler)"),
    ("link_columns", "list", "`{name, unit}` of the per-link columns (the sampler)"),
    ("links_interval_s", "number", "seconds between `links` messages (the sampler)"),
    (protocol.CPU_BUDGET_KEY, "object", "nvml: the CPU budget and its plan"),
    ("watchdog", "object", "a daemon whose watchdog is armed"),
    ("limits", "str", "nvidia-smi: what this stream cannot do"),
)

# ``hello["cpu_budget"]`` (nvml): the CPU budget and the plan that fits it; the backend
# builds it through ``build`` and docs/protocol.md's table under ``cpu_budget`` names each.
CPU_BUDGET_KEYS: Tuple[Fact, ...] = (
    ("version", "int", "the plan's number in this run"),
    ("budget_pct", "number", "the budget, % of one core"),
    ("planned_pct", "number", "what the plan is expected to cost, % of one core"),
    ("within", "bool", "false when every tier at its longest period does not fit"),
    ("per_gpu_us_per_s", "number", "the plan's µs of CPU per GPU per second"),
    ("tiers_s", "object", "`{tier: seconds}` each tier is read at"),
    ("needed_s", "object", "`{tier: seconds}` each tier is wanted at"),
    ("gave_up", "object", "`{tier: [needed_s, planned_s]}` for each tier read less often"),
    ("throughput_s", "number|null", "seconds between PCIe / NVLink throughput values"),
    ("workers", "int", "threads reading the GPUs side by side"),
    ("cpus", "int", "the cores the sampler may use"),
    ("pooled", "str", "which GPUs of a tick the threads read"),
    ("settled", "bool", "false while the first ticks may still change the plan"),
    ("measured_pct", "number|null", "what the reads cost over the last check"),
    ("cost_scale", "number", "the factor the plan applies to its start-up timing"),
)

# Every ``hello["gpus"][i]``, card or MIG slice.
GPU_KEYS: Tuple[Fact, ...] = (
    ("index", "int", "NVML index; rows and processes name the GPU by it"),
    ("uuid", "str", '"GPU-…" ("MIG-…" for a slice)'),
    ("name", "str", "product name"),
    ("pci_bus_id", "str", '"00000000:07:00.0"'),
    ("nominal", "object", "nominal values (`NOMINAL_KEYS`; a slice: its memory only)"),
    ("unsupported", "object", "`{column: reason}` for every column it reports as null"),
)
# A card's entry (not a MIG slice's) adds its inventory.
CARD_KEYS: Tuple[Fact, ...] = (
    ("arch", "str|null", 'architecture, e.g. "hopper"'),
    ("compute_capability", "str|null", '"9.0"'),
    ("brand", "str|null", 'product brand, e.g. "nvidia", "geforce"'),
    ("serial", "str|null", "board serial number"),
    ("vbios", "str|null", "VBIOS version"),
    ("persistence_mode", "bool|null", "persistence mode on"),
    ("mig_mode", "bool|null", "MIG mode on"),
    ("ecc_mode", "bool|null", "ECC on"),
    ("virtualization_mode", "str|null", '"none" | "passthrough" | "vgpu" | "host_vgpu" | …'),
    ("compute_mode", "str|null", '"default" | "exclusive_process" | "prohibited" | …'),
    ("lost", "int", "1 when the GPU was already lost at start"),
)
# A MIG slice's entry adds what names its card (see "MIG slices" in docs/protocol.md).
SLICE_KEYS: Tuple[Fact, ...] = (
    (protocol.MIG_KEY, "object", "parent, slot, instance ids, profile, SMs"),
    (protocol.LINKS_UNSUPPORTED_KEY, "str", "NVLink belongs to the parent GPU"),
)
# Keys an entry may add: why it has no ``links`` rows (every producer, where so), and what
# only the nvml backend knows.
GPU_OPTIONAL: Tuple[Fact, ...] = (
    (protocol.LINKS_UNSUPPORTED_KEY, "str", "why this GPU sends no `links` rows"),
    ("minor", "int|null", "nvml: the minor number N of /dev/nvidiaN"),
    ("device", "str|null", "nvml: the device file's path"),
    ("gpm", "bool|null", "nvml: GPM metrics are read"),
    ("memory_info", "str", 'nvml: "v2" or "v1" memory info'),
    ("probes", "object", "nvml: what each start-up probe answered"),
    (protocol.GPU_COST_KEY, "object", "nvml: µs of CPU each kind of read cost at start"),
    ("gpm_throughput", "list", "nvml: throughput read from GPM instead of fields"),
)

# ----------------------------------------------------------------------------- info, check

INFO_KEYS: Tuple[Fact, ...] = (
    ("kind", "str", '"info"'),
    ("protocol", "int", "protocol version"),
    ("sampler_version", "str", "the sampler's version"),
    ("backend", "str", '"nvml" | "sim"'),
    ("scenario", "str|null", "sim scenario name"),
    ("t", "number", "wall-clock time of the answer"),
    ("host", "object", "as in `hello`"),
    ("gpu_count", "int", "GPUs (cards)"),
    ("gpus", "list", "as in `hello` (cards only)"),
)

CHECK_KEYS: Tuple[Fact, ...] = (
    ("kind", "str", '"check"'),
    ("protocol", "int", "protocol version"),
    ("sampler_version", "str", 'the sampler\'s version ("nvidia-smi" on that path)'),
    ("backend", "str", '"nvml" | "sim" | "nvidia-smi"'),
    ("scenario", "str|null", "sim scenario name"),
    ("t", "number", "wall-clock time of the answer"),
    ("host", "object", "as in `hello`"),
    ("driver_version", "str|null", "NVIDIA driver version"),
    ("cuda_version", "str|null", "CUDA driver API version"),
    ("gpu_count", "int", "GPUs (cards)"),
    ("gpus", "list", "the facts of each GPU, below"),
    ("events", "list", "events the backend already held"),
    ("xid", "object", '`{"seen": "unknown" | true | false, "source": "none" | "daemon", …}`'),
)

CHECK_GPU_KEYS: Tuple[Fact, ...] = (
    ("index", "int", "identity"),
    ("uuid", "str", "identity"),
    ("name", "str", "identity"),
    ("pci_bus_id", "str|null", "identity"),
    ("lost", "int", "1 when NVML reports it lost"),
    ("persistence_mode", "bool|null", "off makes every nvidia-smi call slow"),
    ("pstate", "int|null", "performance state now"),
    ("clock_reasons", "int|null", "clock event reasons bitmask now"),
    ("util_gpu_pct", "number|null", "utilization now (%)"),
    ("power_w", "number|null", "draw (W)"),
    ("power_enforced_w", "number|null", "enforced limit (W)"),
    ("power_default_w", "number|null", "default limit (W)"),
    ("power_max_w", "number|null", "highest settable limit (W)"),
    ("temp_gpu_c", "number|null", "GPU temperature (°C)"),
    ("temp_mem_c", "number|null", "memory temperature (°C)"),
    ("temp_slowdown_c", "number|null", "slowdown threshold (°C)"),
    ("temp_shutdown_c", "number|null", "shutdown threshold (°C)"),
    ("temp_mem_max_c", "number|null", "memory's own limit (°C)"),
    ("sm_clock_mhz", "number|null", "SM clock now (MHz)"),
    ("sm_clock_max_mhz", "number|null", "max SM clock (MHz)"),
    ("pcie_gen", "int|null", "PCIe generation now"),
    ("pcie_max_gen", "int|null", "max PCIe generation"),
    ("pcie_width", "int|null", "PCIe width now"),
    ("pcie_max_width", "int|null", "max PCIe width"),
    ("pcie_replays", "int|null", "PCIe replay counter"),
    ("nvlink_links", "int|null", "NVLink links (0 = none)"),
    ("nvlink_up", "int|null", "NVLink links up"),
    ("nvlink_errors", "int|null", "NVLink error counters, summed"),
    ("ecc_mode", "bool|null", "ECC on"),
    ("ecc_sbe_vol", "int|null", "corrected errors since driver load"),
    ("ecc_dbe_vol", "int|null", "uncorrected errors since driver load"),
    ("ecc_sbe_agg", "int|null", "corrected errors, lifetime"),
    ("ecc_dbe_agg", "int|null", "uncorrected errors, lifetime"),
    ("remapped_rows_correctable", "int|null", "rows remapped for corrected errors (Ampere+)"),
    ("remapped_rows_uncorrectable", "int|null", "rows remapped for uncorrected errors"),
    ("remap_pending", "int|null", "1 when a row remapping is pending"),
    ("remap_failed", "int|null", "1 when a row remapping failed"),
    ("retired_pending", "int|null", "1 when a page retirement is pending (pre-Ampere)"),
    ("xid_seen", "str|bool", '"unknown", or a bool when a daemon answered'),
    ("processes", "int|null", "how many processes are on the GPU"),
    ("process_list", "list", "the entries, as in `procs`"),
    ("processes_not_here", "int|null", "NVML entries not in this container (`not_here`)"),
    ("mem_not_here_bytes", "int|null", "the memory they hold (B)"),
    ("minor", "int|null", "as in `hello` (nvml)"),
    ("device", "str|null", "as in `hello` (nvml)"),
    ("mem_total_bytes", "int|null", "framebuffer memory (B)"),
    ("mem_reserved_bytes", "int|null", "memory the driver keeps back (B)"),
    ("mem_used_bytes", "int|null", "memory used (B)"),
    ("virtualization_mode", "str|null", "as in `hello`"),
    ("mig_mode", "bool|null", "MIG mode on"),
    ("mig_slices", "int|null", "MIG slices on this card"),
    ("compute_mode", "str|null", "as in `hello`"),
    ("unsupported", "object", "`{fact or column: reason}`"),
)

# ----------------------------------------------------------------------------- event

EVENT_KEYS: Tuple[Fact, ...] = (
    ("type", "str", "one of `EVENT_TYPES`"),
    ("gpu", "int|null", "GPU index, null for host-wide events"),
    ("code", "int|null", "the Xid for `xid`, else null or a type-specific code"),
    ("message", "str", "one human-readable line"),
)
# What the loop (or the daemon, or the nvidia-smi link) puts before the four when it sends it.
EVENT_HEADER: Tuple[Fact, ...] = (
    ("kind", "str", '"event"'),
    ("seq", "int", "sequence number"),
    ("t", "number", "wall-clock time the sampler noticed it"),
)
# The keys a type adds to the four; a type not named here adds none.
EVENT_TYPE_KEYS: Dict[str, Tuple[Fact, ...]] = {
    protocol.EVENT_NOTE: (
        ("gap_from", "int", "a gap note: the first seq not (all) delivered"),
        ("gap_to", "int", "a gap note: the last seq not (all) delivered"),
        ("reason", "str", 'a gap note: "ring" | "restart"'),
    ),
    protocol.EVENT_WATCHDOG: (
        ("phase", "str", "the watchdog's phase: pending, done, watching, …"),
        ("alert", "str|null", "the idle period it acts on"),
        ("action", "str|null", "pending, done: the action"),
        ("deadline_t", "number", "pending: when it acts unless cancelled"),
        ("dry_run", "bool", "pending, done: it only says what it would do"),
        ("ok", "bool", "done: the action succeeded"),
        ("outcome", "str", "done: what the action did; a readiness change: why"),
        ("ready", "bool", "a readiness change: the action can run now"),
    ),
}

# ----------------------------------------------------------------------------- NVML's numbers

# The documented names of NVML's enumerations, for the facts that are names on the wire.
VIRTUALIZATION_NAMES: Dict[int, str] = {
    0: "none",
    1: "passthrough",
    2: "vgpu",
    3: "host_vgpu",
    4: "host_vsga",
}
COMPUTE_MODE_NAMES: Dict[int, str] = {
    0: "default",
    1: "exclusive_thread",
    2: "prohibited",
    3: "exclusive_process",
}
ARCH_NAMES: Dict[int, str] = {
    2: "kepler",
    3: "maxwell",
    4: "pascal",
    5: "volta",
    6: "turing",
    7: "ampere",
    8: "ada",
    9: "hopper",
    10: "blackwell",
}
BRAND_NAMES: Dict[int, str] = {
    0: "unknown",
    1: "quadro",
    2: "tesla",
    3: "nvs",
    4: "grid",
    5: "geforce",
    6: "titan",
    7: "nvidia_vapps",
    8: "nvidia_vpc",
    9: "nvidia_vcs",
    10: "nvidia_vws",
    11: "nvidia_cloud_gaming",
    12: "quadro_rtx",
    13: "nvidia_rtx",
    14: "nvidia",
    15: "geforce_rtx",
    16: "titan_rtx",
}


def _named(names: Mapping[int, str]) -> Callable[[Any], Any]:
    def name(v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            return names.get(v, "unknown ({})".format(v))
        return v

    return name


def _flag(v: Any) -> Any:
    """NVML's and nvidia-smi's 0/1 as the bool the protocol says."""
    if isinstance(v, int) and not isinstance(v, bool):
        return bool(v)
    return v


def _bit(v: Any) -> Any:
    """A flag said as 0/1, as in the sample columns (nvidia-smi's parser gives bools)."""
    return int(v) if isinstance(v, bool) else v


_COERCE: Dict[str, Callable[[Any], Any]] = {
    "persistence_mode": _flag,
    "mig_mode": _flag,
    "ecc_mode": _flag,
    "virtualization_mode": _named(VIRTUALIZATION_NAMES),
    "compute_mode": _named(COMPUTE_MODE_NAMES),
    "arch": _named(ARCH_NAMES),
    "brand": _named(BRAND_NAMES),
    "remap_pending": _bit,
    "remap_failed": _bit,
    "retired_pending": _bit,
}

# ----------------------------------------------------------------------------- building


def names(*tables: Tuple[Fact, ...]) -> Tuple[str, ...]:
    """The key names of ``tables``, in order."""
    return tuple(f[0] for t in tables for f in t)


def build(
    tables: Tuple[Tuple[Fact, ...], ...],
    values: Mapping[str, Any],
    optional: Tuple[Fact, ...] = (),
) -> Dict[str, Any]:
    """The message of ``tables``' keys (and any of the ``optional`` ones) from ``values``.
    Raises ``SchemaError`` naming every key missing from
    ``values`` and every key no table defines."""
    required = names(*tables)
    allowed = set(required) | set(names(optional))
    missing = [k for k in required if k not in values]
    unknown = sorted(k for k in values if k not in allowed)
    if missing or unknown:
        raise SchemaError(
            "message keys do not match the protocol schema: missing {}, unknown {}".format(
                missing or "none", unknown or "none"
            )
        )
    # In the producer's order: the wire stays as it was, byte for byte where types agreed.
    return {k: coerce(k, v) for k, v in values.items()}


def coerce(key: str, v: Any) -> Any:
    """``v`` as the schema sends ``key`` (an NVML number as its name or flag)."""
    fn = _COERCE.get(key)
    return fn(v) if fn is not None and v is not None else v


def hello_gpu(values: Mapping[str, Any]) -> Dict[str, Any]:
    """A card's ``hello["gpus"]`` entry (nominal keys not read are null)."""
    out = build((GPU_KEYS, CARD_KEYS), values, GPU_OPTIONAL)
    out["nominal"] = nominal(out["nominal"])
    return out


def hello_slice(values: Mapping[str, Any]) -> Dict[str, Any]:
    """A MIG slice's ``hello["gpus"]`` entry."""
    return build((GPU_KEYS, SLICE_KEYS), values)


def nominal(values: Mapping[str, Any]) -> Dict[str, Any]:
    """A card's ``nominal``: every ``protocol.NOMINAL_KEYS`` key, null where not read."""
    known = set(k for k, _ in protocol.NOMINAL_KEYS)
    unknown = sorted(k for k in values if k not in known)
    if unknown:
        raise SchemaError("nominal keys the protocol does not define: {}".format(unknown))
    return {k: values.get(k) for k, _ in protocol.NOMINAL_KEYS}


def hello(values: Mapping[str, Any]) -> Dict[str, Any]:
    """A ``hello`` message."""
    return build((HELLO_KEYS,), _kind(protocol.KIND_HELLO, values), HELLO_OPTIONAL)


def check_gpu(values: Mapping[str, Any]) -> Dict[str, Any]:
    """One GPU's ``check`` facts."""
    return build((CHECK_GPU_KEYS,), values)


def check(values: Mapping[str, Any]) -> Dict[str, Any]:
    """A ``check`` answer."""
    return build((CHECK_KEYS,), _kind(KIND_CHECK, values))


def info(values: Mapping[str, Any]) -> Dict[str, Any]:
    """An ``info`` answer."""
    return build((INFO_KEYS,), _kind(KIND_INFO, values))


def event(
    type: str, gpu: Optional[int], code: Optional[int], message: str, **extra: Any
) -> Dict[str, Any]:
    """An event's own keys (the loop adds ``kind``, ``seq`` and ``t``); ``extra`` are the
    type's own (``EVENT_TYPE_KEYS``: a watchdog's ``phase``, a gap note's ``gap_from``).
    Raises ``SchemaError`` for a type ``protocol.EVENT_TYPES`` lacks or a key its type does
    not define."""
    if type not in protocol.EVENT_TYPES:
        raise SchemaError("event type {!r} is not one of {}".format(type, protocol.EVENT_TYPES))
    own = names(EVENT_TYPE_KEYS.get(type, ()))
    unknown = sorted(k for k in extra if k not in own)
    if unknown:
        raise SchemaError(
            "keys a {!r} event does not define: {} (EVENT_TYPE_KEYS in protocol_schema.py "
            "names them)".format(type, unknown)
        )
    out = {"type": type, "gpu": gpu, "code": code, "message": message}  # type: Dict[str, Any]
    out.update(extra)
    return out


def numbered(seq: int, t: Any, ev: Mapping[str, Any]) -> Dict[str, Any]:
    """The ``event`` message of ``ev`` (built by ``event``) as sent: ``kind``, ``seq``, ``t``
    first, then its own keys."""
    out = {"kind": protocol.KIND_EVENT, "seq": seq, "t": t}  # type: Dict[str, Any]
    out.update(ev)
    return out


def _kind(kind: str, values: Mapping[str, Any]) -> Dict[str, Any]:
    out = {"kind": kind}  # type: Dict[str, Any]
    out.update((k, v) for k, v in values.items() if k != "kind")
    return out


# ----------------------------------------------------------------------------- checking

_JSON_TYPES: Dict[str, Callable[[Any], bool]] = {
    "null": lambda v: v is None,
    "bool": lambda v: isinstance(v, bool),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "list": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def problems(
    tables: Tuple[Tuple[Fact, ...], ...],
    obj: Mapping[str, Any],
    optional: Tuple[Fact, ...] = (),
    where: str = "",
) -> List[str]:
    """What in ``obj`` disagrees with ``tables``: a key missing, a key no table defines, a
    value of a type its key does not take; one line each, prefixed with ``where``."""
    out = []  # type: List[str]
    facts = {f[0]: f for t in tables for f in t}
    for f in optional:
        facts.setdefault(f[0], f)
    for name in names(*tables):
        if name not in obj:
            out.append("{}{}: missing".format(where, name))
    for name, v in obj.items():
        types = facts[name][1] if name in facts else None
        if types is None:
            out.append("{}{}: not in the schema".format(where, name))
        elif not any(_JSON_TYPES[t](v) for t in types.split("|")):
            out.append("{}{}: {!r} is not {}".format(where, name, v, types))
    return out


def event_problems(ev: Mapping[str, Any], where: str = "") -> List[str]:
    """What in the event ``ev`` (with or without its header) disagrees with the schema."""
    typ = ev.get("type")
    if typ not in protocol.EVENT_TYPES:
        return ["{}type: {!r} is not one of EVENT_TYPES".format(where, typ)]
    header = tuple(f for f in EVENT_HEADER if f[0] in ev)
    return problems((EVENT_KEYS, header), ev, EVENT_TYPE_KEYS.get(str(typ), ()), where)
