"""Typed, immutable messages parsed from the sampler's JSON lines.

``StreamDecoder`` turns a stream of lines into ``Hello`` / ``Sample`` / ``Procs`` / ``Event``
/ ``Links`` / ``ErrorMsg`` objects. It is stateful only in that ``sample`` and ``links`` rows
are positional and their columns are named by the preceding ``hello``. A bad line never
raises out of ``feed``: it is counted (``bad_lines``) and its reason kept (``last_error``),
and decoding goes on.

Everything downstream (fleet, rules, cost, store, UI) consumes these types, never raw dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from typing import Annotated, Any, NamedTuple

import msgspec
import orjson
from gpufleet_sampler import protocol
from msgspec import Meta

Value = float | int | None


class ProtocolError(ValueError):
    """A line that is not a valid protocol message (reason in the text)."""


class VersionError(ProtocolError):
    """The sampler speaks a protocol version this client does not accept."""


@dataclass(frozen=True)
class GpuInfo:
    """Static inventory and nominal values of one GPU, from ``hello``."""

    index: int
    uuid: str
    name: str
    pci_bus_id: str
    nominal: Mapping[str, Value]
    unsupported: Mapping[str, str]
    extra: Mapping[str, Any] = field(default_factory=dict)

    def nominal_value(self, key: str) -> Value:
        return self.nominal.get(key)


@dataclass(frozen=True)
class Hello:
    protocol: int
    sampler_version: str
    run_id: str
    backend: str
    interval_s: float
    columns: tuple[str, ...]
    host: Mapping[str, Any]
    gpus: tuple[GpuInfo, ...]
    raw: Mapping[str, Any]

    def gpu(self, index: int) -> GpuInfo | None:
        for g in self.gpus:
            if g.index == index:
                return g
        return None


@dataclass(frozen=True)
class Sample:
    """One tick: ``rows[i]`` is ``(gpu_index, *values)`` in ``columns`` order."""

    seq: int
    t: float  # wall clock, seconds since the epoch
    mono: float  # sampler's monotonic clock, seconds
    columns: tuple[str, ...]
    rows: tuple[tuple[Value, ...], ...]

    def gpu_indices(self) -> list[int]:
        return [int(r[0]) for r in self.rows if r and r[0] is not None]

    def row(self, gpu: int) -> tuple[Value, ...] | None:
        for r in self.rows:
            if r and r[0] == gpu:
                return r
        return None

    def value(self, gpu: int, metric: str) -> Value:
        r = self.row(gpu)
        if r is None:
            return None
        try:
            pos = self.columns.index(metric) + 1
        except ValueError:
            return None
        return r[pos] if pos < len(r) else None


class Proc(NamedTuple):
    """One process on one GPU. A NamedTuple rather than a frozen dataclass: equally
    immutable, and several times cheaper to build for every process of every snapshot."""

    gpu: int
    pid: int
    start_ticks: int | None
    user: str | None
    name: str | None
    cmd: str | None
    mem_bytes: int | None
    sm_pct: float | None
    type: str | None
    # Inside a container NVML reports the host's PIDs: ``pid`` is then the PID in the
    # sampler's namespace (what a kill addresses) and ``host_pid`` NVML's; ``mapping`` says how
    # sure the match is (protocol.MAPPINGS; None: a backend that does not tell, the same
    # namespace).
    host_pid: int | None = None
    mapping: str | None = None
    holds_device: bool | None = None
    orphan: bool = False

    @property
    def here(self) -> bool:
        """The process is in the sampler's PID namespace: it can be named and killed."""
        return self.mapping != protocol.MAP_NOT_HERE

    @property
    def killable(self) -> bool:
        return self.here and self.start_ticks is not None


@dataclass(frozen=True)
class Procs:
    seq: int
    t: float
    procs: tuple[Proc, ...]


@dataclass(frozen=True)
class Event:
    seq: int
    t: float
    type: str
    gpu: int | None
    code: int | None
    message: str
    raw: Mapping[str, Any]


@dataclass(frozen=True)
class ErrorMsg:
    message: str
    code: str | None
    raw: Mapping[str, Any]


class LinkRow(NamedTuple):
    """Per-link NVLink values of one GPU: each field holds one value per link (link n at
    position n); None = not reported."""

    gpu: int
    tx_bps: tuple[Value, ...]
    rx_bps: tuple[Value, ...]
    up: tuple[Value, ...]
    speed_bps: tuple[Value, ...]

    @property
    def n_links(self) -> int:
        return len(self.up)


@dataclass(frozen=True)
class Links:
    """A ``links`` message: per-link NVLink rows of the GPUs that have NVLink (sent on the
    sampler's medium tier, every ``hello.raw["links_interval_s"]`` seconds)."""

    seq: int
    t: float
    rows: tuple[LinkRow, ...]
    raw: Mapping[str, Any]

    def row(self, gpu: int) -> LinkRow | None:
        for r in self.rows:
            if r.gpu == gpu:
                return r
        return None


Message = Hello | Sample | Procs | Event | ErrorMsg | Links

# More links than this per GPU is garbage, not a GPU (NVML_NVLINK_MAX_LINKS is 36).
MAX_LINKS = 64

# Ranges every accepted message keeps to, so that nothing downstream (SQLite and NumPy
# int64 columns, datetime, the stall watchdog) meets a value it cannot hold. orjson already
# refuses NaN and infinities; it does accept integers up to 2**64 - 1, which int64 cannot.
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
MAX_GPU_INDEX = 2**31 - 1  # NVML indices are small unsigned ints
# GPUs of one host: the live window preallocates per GPU, so a hello listing a million GPUs
# must not reach it (the largest boards carry 8-16; 128 leaves room).
MAX_GPUS = 128
MAX_PID = 2**31 - 1  # pid_t
# Wall-clock times from the epoch up to the end of year 9999, what datetime can show.
MAX_T = 253_402_300_799.0
# A monotonic clock counts from boot: anything beyond ~35,000 years is garbage.
MAX_MONO = float(2**40)
# hello.interval_s: the stall watchdog waits a few intervals, so a huge one would disable
# it, and a tiny one would make every host look stalled.
MIN_INTERVAL_S = 0.001
MAX_INTERVAL_S = 3600.0


def _num(obj: Mapping[str, Any], key: str, lo: float = -1e300, hi: float = 1e300) -> float:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ProtocolError(f"field {key!r} must be a number, got {_short(v)}")
    f = float(v)
    if not lo <= f <= hi:
        raise ProtocolError(f"field {key!r} out of range [{lo:g}, {hi:g}]: {_short(v)}")
    return f


def _int(obj: Mapping[str, Any], key: str, lo: int = INT64_MIN, hi: int = INT64_MAX) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ProtocolError(f"field {key!r} must be an integer, got {_short(v)}")
    if not lo <= v <= hi:
        raise ProtocolError(f"field {key!r} out of range [{lo}, {hi}]: {v}")
    return v


def _short(v: Any) -> str:
    """A value for an error message, cut so that a hostile one cannot flood the log."""
    r = repr(v)
    return r if len(r) <= 80 else r[:77] + "..."


def _opt_int(v: Any, key: str = "value", lo: int = INT64_MIN, hi: int = INT64_MAX) -> int | None:
    """None for a missing or non-integer value; a ProtocolError for an integer out of range
    (it cannot be stored, and silently dropping it would hide a hostile sampler)."""
    if type(v) is not int:
        return None
    if not lo <= v <= hi:
        raise ProtocolError(f"field {key!r} out of range [{lo}, {hi}]: {v}")
    return v


def _opt_num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _nominal(v: Any) -> dict[str, Value]:
    if v is None:
        return {}
    if type(v) is not dict:
        raise ProtocolError(f"hello gpu nominal must be an object, got {_short(v)}")
    for k, x in v.items():
        if x is not None and (type(x) not in (int, float) or not -1e300 <= x <= 1e300):
            raise ProtocolError(f"hello gpu nominal {k!r} must be a number, got {_short(x)}")
    return dict(v)


def _unsupported(v: Any) -> dict[str, str]:
    if v is None:
        return {}
    if type(v) is not dict:
        raise ProtocolError(f"hello gpu unsupported must be an object, got {_short(v)}")
    return {k: str(x) for k, x in v.items()}


def parse_hello(obj: Mapping[str, Any]) -> Hello:
    version = _int(obj, "protocol")
    if not protocol.PROTOCOL_MIN <= version <= protocol.PROTOCOL_MAX:
        raise VersionError(
            f"the sampler speaks protocol {version}; this gpufleet accepts "
            f"{protocol.PROTOCOL_MIN}..{protocol.PROTOCOL_MAX}: upgrade the app or let it "
            "redeploy the sampler"
        )
    cols = obj.get("columns")
    if not isinstance(cols, list) or not cols:
        raise ProtocolError("hello has no columns")
    names = tuple(c.get("name") if isinstance(c, dict) else c for c in cols)
    if not all(type(n) is str and n for n in names) or len(set(names)) != len(names):
        raise ProtocolError("hello columns must be distinct non-empty names")
    columns = tuple(str(n) for n in names)
    gpus_raw = obj.get("gpus")
    if not isinstance(gpus_raw, list):
        raise ProtocolError("hello has no gpus list")
    if len(gpus_raw) > MAX_GPUS:
        raise ProtocolError(f"hello lists {len(gpus_raw)} GPUs, more than {MAX_GPUS}")
    gpus: list[GpuInfo] = []
    for g in gpus_raw:
        if not isinstance(g, dict):
            raise ProtocolError("hello gpus entries must be objects")
        known = {"index", "uuid", "name", "pci_bus_id", "nominal", "unsupported"}
        gpus.append(
            GpuInfo(
                index=_int(g, "index", 0, MAX_GPU_INDEX),
                uuid=str(g.get("uuid") or ""),
                name=str(g.get("name") or "GPU"),
                pci_bus_id=str(g.get("pci_bus_id") or ""),
                nominal=_nominal(g.get("nominal")),
                unsupported=_unsupported(g.get("unsupported")),
                extra={k: v for k, v in g.items() if k not in known},
            )
        )
    host = obj.get("host")
    return Hello(
        protocol=version,
        sampler_version=str(obj.get("sampler_version") or "?"),
        run_id=str(obj.get("run_id") or ""),
        backend=str(obj.get("backend") or "?"),
        interval_s=(
            _num(obj, "interval_s", MIN_INTERVAL_S, MAX_INTERVAL_S) if "interval_s" in obj else 1.0
        ),
        columns=columns,
        host=dict(host) if isinstance(host, dict) else {},
        gpus=tuple(gpus),
        raw=dict(obj),
    )


def _parse_sample(obj: Mapping[str, Any], hello: Hello | None) -> Sample:
    if hello is None:
        raise ProtocolError("sample before hello")
    gpus = obj.get("gpus")
    if not isinstance(gpus, list):
        raise ProtocolError("sample without a gpus list")
    if len(gpus) > MAX_GPUS:
        raise ProtocolError(f"sample has {len(gpus)} rows, more than {MAX_GPUS}")
    width = len(hello.columns) + 1
    rows: tuple[tuple[Value, ...], ...]
    rows = tuple(_clean_row(r, width) for r in gpus)
    return Sample(
        seq=_int(obj, "seq", 0),
        t=_num(obj, "t", 0.0, MAX_T),
        mono=_num(obj, "mono", 0.0, MAX_MONO),
        columns=hello.columns,
        rows=rows,
    )


# What a links line's "gpus" array may hold on its fast path, byte by byte: digits become "9",
# "[" stays "[", the rest of the punctuation of numbers, rows and nulls ("n", "u", "l" only
# as null: the line already parsed as JSON, so no other word remains) becomes ",", and
# anything else becomes "[" too, so that counting "[" (one per row, as the caller checks)
# also finds any byte that has no place there. An exponent ("e", "E") is such a byte: the
# sampler never writes one for a value of normal size, and one is how a value too large
# for anything downstream would arrive.
_FAST_BYTES = bytes(
    0x39 if 0x30 <= b <= 0x39 else 0x2C if bytes((b,)) in b".,-+]nul" else 0x5B for b in range(256)
)
# 20 digits in a row: a number near or past 2**64 (checked value by value on the general
# path; no metric comes near it).
_LONG_DIGITS = b"9" * 20
# Row values beyond this are no GPU metric (byte counters reach ~1e16 in years): refused,
# as float32 live buffers and int64 columns could not hold them.
MAX_VALUE = float(2**64)


_WHITESPACE = b" \t\r\n"


def _array_brackets(line: bytes) -> int | None:
    """How many "[" the line's "gpus" array holds after its own, where that array comes
    last and its bytes are only numbers without exponents or 20-digit runs, nulls, commas
    and brackets; None otherwise. Each byte checked once, in C (translate, then find and
    count over the array's range of the translated line): the sampler's own links lines
    then need no check value by value."""
    i = line.find(b'"gpus":[')
    if i < 0:
        return None
    if not line.endswith(b"]]}"):  # a line still ending in whitespace (a newline)
        line = line.rstrip(_WHITESPACE)
        if not line.endswith(b"]]}"):
            return None
    i += 8
    end = len(line) - 1
    mapped = line.translate(_FAST_BYTES)
    if mapped.find(_LONG_DIGITS, i, end) >= 0:
        return None
    return mapped.count(b"[", i, end)


# The sample fast path: the sampler's own sample lines decoded by msgspec straight into
# the types the general path checks for, each value checked against its range while it
# is parsed, in C: one pass over the line, where orjson and then a byte check of the
# array (translate, count, search) took four, and no copy of the rows into tuples. A line
# it refuses takes the general path, which says what is wrong, or takes what only it
# accepts (a boolean in a row as null, an integer from 2**63 to 2**64), so that both give
# the same Sample or the same refusal.
# Each bound as msgspec checks it: (lower, upper) for lines with a minus sign anywhere, and
# upper only for lines without one (the sampler's: no number there can be negative, and a
# one-sided bound costs msgspec half as much).
_SIGNED, _UNSIGNED = 0, 1
# Where a line of the sampler's own starts (a sample line in another key order takes the
# general path).
_SAMPLE_PREFIX = b'{"kind":"sample",'


def _annotated(kind: Any, meta: Meta) -> Any:
    """``Annotated[kind, meta]`` for a type built at run time."""
    return Annotated.__class_getitem__((kind, meta))  # type: ignore[attr-defined]


def _bounded(kind: type, lo: float, hi: float, signs: int) -> Any:
    return _annotated(kind, Meta(le=hi) if signs == _UNSIGNED else Meta(ge=lo, le=hi))


@lru_cache(maxsize=32)
def _sample_line_decoder(width: int, signs: int) -> Callable[[bytes], Any]:
    """A decoder of sample lines whose rows are ``width`` long (GPU index included), each
    a tuple of exactly that many values, the index first (``_asdict`` of what it returns:
    ``seq``, ``t``, ``mono``, ``rows``). One per row width and sign, shared."""
    value = (
        _bounded(int, INT64_MIN, INT64_MAX, signs)
        | _bounded(float, -MAX_VALUE, MAX_VALUE, signs)
        | None
    )
    row = tuple.__class_getitem__((_bounded(int, 0, MAX_GPU_INDEX, signs), *(value,) * (width - 1)))
    rows_max = Meta(max_length=MAX_GPUS)
    line = msgspec.defstruct(
        "SampleLine",
        [
            ("seq", _bounded(int, 0, INT64_MAX, signs)),
            ("t", _bounded(float, 0.0, MAX_T, signs)),
            ("mono", _bounded(float, 0.0, MAX_MONO, signs)),
            (
                "rows",
                _annotated(tuple.__class_getitem__((row, ...)), rows_max),
                msgspec.field(name="gpus"),
            ),
        ],
        frozen=True,
        gc=False,  # holds numbers only, and lives only until its Sample is built
        # "kind" checked as the tag (which no field holds, so that asdict gives exactly the
        # Sample's fields but its columns).
        tag_field="kind",
        tag=protocol.KIND_SAMPLE,
    )
    return msgspec.json.Decoder(line).decode


class _SampleLayout(NamedTuple):
    """What one hello's sample lines look like (a decoder holds its own)."""

    hello: Hello | None
    columns: tuple[str, ...]
    decode_unsigned: Callable[[bytes], Any]
    decode_signed: Callable[[bytes], Any]


def _no_decoder(line: bytes) -> Any:
    raise msgspec.ValidationError("no hello yet")


_NO_LAYOUT = _SampleLayout(None, (), _no_decoder, _no_decoder)
_FAST_REFUSED = (msgspec.ValidationError, msgspec.DecodeError)


def _sample_layout(hello: Hello) -> _SampleLayout:
    width = len(hello.columns) + 1
    return _SampleLayout(
        hello,
        hello.columns,
        _sample_line_decoder(width, _UNSIGNED),
        _sample_line_decoder(width, _SIGNED),
    )


_object_new = object.__new__
_object_setattr = object.__setattr__
_asdict = msgspec.structs.asdict


def _clean_row(r: Any, width: int) -> tuple[Value, ...]:
    if type(r) is not list or not r or type(r[0]) is not int:
        raise ProtocolError("sample row must be a list starting with the GPU index")
    if not 0 <= r[0] <= MAX_GPU_INDEX:
        raise ProtocolError(f"sample row GPU index out of range: {r[0]}")
    if len(r) != width:
        raise ProtocolError(f"sample row has {len(r)} values, hello names {width}")
    for v in r:
        # A value that is not a number, a boolean or null (a list, an object, a string)
        # makes the line bad: taking it as null would hide a broken or hostile sampler.
        if v is not None and type(v) is not bool:
            if type(v) not in (int, float):
                raise ProtocolError(f"sample value must be a number or null, got {_short(v)}")
            if not -MAX_VALUE <= v <= MAX_VALUE:
                raise ProtocolError(f"sample value out of range: {_short(v)}")
    # A boolean is no number: null, as the protocol has no boolean columns.
    return tuple(None if type(v) is bool else v for v in r)


class _ProcsCache:
    """The last procs list as received and as parsed: process snapshots rarely change from
    one to the next, and comparing two decoded lists runs at C speed."""

    __slots__ = ("parsed", "raw")

    def __init__(self) -> None:
        self.raw: list[Any] | None = None
        self.parsed: tuple[Proc, ...] = ()


def _parse_procs(obj: Mapping[str, Any], cache: _ProcsCache | None = None) -> Procs:
    raw = obj.get("procs")
    if not isinstance(raw, list):
        raise ProtocolError("procs without a procs list")
    seq, t = _int(obj, "seq", 0), _num(obj, "t", 0.0, MAX_T)
    if cache is not None and cache.raw == raw:
        return Procs(seq=seq, t=t, procs=cache.parsed)
    out: list[Proc] = []
    for p in raw:
        if type(p) is not dict:
            raise ProtocolError("procs entries must be objects")
        # Inlined type checks (exact types, so bool never passes as int): a host sends a
        # snapshot every couple of seconds with a process per GPU, and this runs for each.
        g = p.get
        sm: Any
        gpu, pid, st, mem, sm = g("gpu"), g("pid"), g("start_ticks"), g("mem_bytes"), g("sm_pct")
        if type(gpu) is not int or type(pid) is not int:
            raise ProtocolError(
                f"process entry needs integer gpu and pid, got {_short(gpu)}, {_short(pid)}"
            )
        if not 0 <= gpu <= MAX_GPU_INDEX or not 0 <= pid <= MAX_PID:
            raise ProtocolError(f"process entry gpu or pid out of range: {gpu}, {pid}")
        if type(st) is int and not 0 <= st <= INT64_MAX:
            raise ProtocolError(f"process start_ticks out of range: {st}")
        if type(mem) is int and not 0 <= mem <= INT64_MAX:
            raise ProtocolError(f"process mem_bytes out of range: {mem}")
        user, name, cmd, typ = g("user"), g("name"), g("cmd"), g("type")
        hp, mapping, holds = g("host_pid"), g("mapping"), g("holds_device")
        out.append(
            Proc(
                gpu,
                pid,
                st if type(st) is int else None,
                user if type(user) is str else None,
                name if type(name) is str else None,
                cmd if type(cmd) is str else None,
                mem if type(mem) is int else None,
                float(sm) if type(sm) in (int, float) and -1e300 <= sm <= 1e300 else None,
                typ if type(typ) is str else None,
                hp if type(hp) is int else None,
                mapping if mapping in protocol.MAPPINGS else None,
                holds if type(holds) is bool else None,
                g("orphan") is True,
            )
        )
    procs = tuple(out)
    if cache is not None:
        cache.raw, cache.parsed = raw, procs
    return Procs(seq=seq, t=t, procs=procs)


def _parse_event(obj: Mapping[str, Any]) -> Event:
    typ = obj.get("type")
    if not isinstance(typ, str):
        raise ProtocolError("event without a type")
    return Event(
        seq=_int(obj, "seq", 0),
        t=_num(obj, "t", 0.0, MAX_T),
        type=typ,
        gpu=_opt_int(obj.get("gpu"), "gpu", 0, MAX_GPU_INDEX),
        code=_opt_int(obj.get("code"), "code"),
        message=str(obj.get("message") or ""),
        raw=dict(obj),
    )


def _link_values(col: Any, n: int | None) -> tuple[Value, ...]:
    if type(col) is not list or len(col) > MAX_LINKS or (n is not None and len(col) != n):
        raise ProtocolError("links row columns must be lists of equal length (one per link)")
    # A value that is not a number, or is beyond any link's (a hostile 1e300), is "not
    # reported": one bad link value does not cost the other links of the message.
    return tuple(
        v if type(v) in (int, float) and -MAX_VALUE <= v <= MAX_VALUE else None for v in col
    )


_NUMBER_TYPES = frozenset((int, float))


def _links_clean(gpus: list[Any]) -> bool:
    """Whether every value of every links row is a number within ±MAX_VALUE: checked once
    for the whole message, at C speed (a type set, a min and a max over all of them), so
    that the per-value filter of _link_values runs only for a message that needs it."""
    try:
        flat = list(chain.from_iterable(chain.from_iterable(r[1:] for r in gpus)))
    except TypeError:  # a row or a column that is no list: the checked path says which
        return False
    if not flat:
        return True
    return (
        set(map(type, flat)) <= _NUMBER_TYPES and min(flat) >= -MAX_VALUE and max(flat) <= MAX_VALUE
    )


# LinkRow's value fields, by the link column each is read from.
_LINK_FIELDS = ("tx_bps", "rx_bps", "up", "speed_bps")
# The last hello's link columns and where LinkRow's fields sit in a row: (hello, (columns,
# positions)), one entry, replaced whole (one global rebinding: every session thread's
# decoder reads it, and never sees one hello's layout paired with another's).
_link_layout_cache: tuple[Any, Any] = (None, None)


def _link_layout(hello: Hello) -> tuple[tuple[Any, ...], tuple[int | None, ...]]:
    global _link_layout_cache
    seen, layout = _link_layout_cache
    if seen is hello:
        return layout  # type: ignore[no-any-return]
    names = hello.raw.get("link_columns")
    cols = (
        tuple(c.get("name") if isinstance(c, dict) else str(c) for c in names)
        if isinstance(names, list) and names
        else protocol.LINK_COLUMN_NAMES
    )
    pos = tuple(cols.index(f) + 1 if f in cols else None for f in _LINK_FIELDS)
    _link_layout_cache = (hello, (cols, pos))
    return cols, pos


def _link_columns(r: list[Any], clean: bool) -> tuple[list[tuple[Value, ...]], int]:
    """A links row's columns (one value per link each) and how many links it has."""
    cs = r[1:]
    n = len(r[1]) if type(r[1]) is list else None
    if (
        clean
        and n is not None
        and n <= MAX_LINKS
        and set(map(type, cs)) == {list}
        and set(map(len, cs)) == {n}
    ):
        return list(map(tuple, cs)), n
    return [_link_values(v, n) for v in cs], n or 0


def _parse_links(obj: Mapping[str, Any], hello: Hello | None, brackets: int | None = None) -> Links:
    """``brackets``: what _array_brackets found in the line, where the caller has it."""
    if hello is None:
        raise ProtocolError("links before hello")
    cols, pos = _link_layout(hello)
    gpus = obj.get("gpus")
    if type(gpus) is not list or len(gpus) > MAX_GPUS:
        raise ProtocolError("links without a gpus list (of at most MAX_GPUS rows)")
    rows: list[LinkRow] = []
    # Bytes of numbers and nulls only, and one "[" per row and per column, no more (no list
    # nested in a column; _link_columns sees that each column is a list): no value to check.
    # Without the line, the values are checked at once in Python.
    clean = brackets == len(gpus) * (len(cols) + 1) if brackets is not None else _links_clean(gpus)
    for r in gpus:
        if type(r) is not list or not r or type(r[0]) is not int:
            raise ProtocolError("links row must be a list starting with the GPU index")
        if not 0 <= r[0] <= MAX_GPU_INDEX:
            raise ProtocolError(f"links row GPU index out of range: {r[0]}")
        if len(r) != len(cols) + 1:
            raise ProtocolError(f"links row has {len(r) - 1} columns, hello names {len(cols)}")
        vals, n = _link_columns(r, clean)
        empty = (None,) * n
        tx, rx, up, speed = (vals[p - 1] if p is not None else empty for p in pos)
        rows.append(LinkRow(r[0], tx, rx, up, speed))
    return Links(
        seq=_int(obj, "seq", 0), t=_num(obj, "t", 0.0, MAX_T), rows=tuple(rows), raw=dict(obj)
    )


def parse_object(
    obj: Any, hello: Hello | None = None, procs_cache: _ProcsCache | None = None
) -> Message:
    """Turn one decoded JSON value into a message; raises ProtocolError."""
    if not isinstance(obj, dict):
        raise ProtocolError("a line must be a JSON object")
    kind = obj.get("kind")
    if kind == protocol.KIND_SAMPLE:
        return _parse_sample(obj, hello)
    if kind == protocol.KIND_HELLO:
        return parse_hello(obj)
    if kind == protocol.KIND_PROCS:
        return _parse_procs(obj, procs_cache)
    if kind == protocol.KIND_EVENT:
        return _parse_event(obj)
    if kind == protocol.KIND_LINKS:
        return _parse_links(obj, hello)
    if kind == protocol.KIND_ERROR:
        return ErrorMsg(
            message=str(obj.get("message") or ""), code=_opt_str(obj.get("code")), raw=dict(obj)
        )
    raise ProtocolError(f"unknown kind {kind!r}")


_loads = orjson.loads
_MAX_LINE_BYTES = protocol.MAX_LINE_BYTES
_BLANK = (b"\n", "\n")


class StreamDecoder:
    """Decodes a stream of lines; never raises on a bad line (except a version mismatch,
    which makes the whole stream unusable and is raised as VersionError)."""

    def __init__(self) -> None:
        self.hello: Hello | None = None
        self.bad_lines = 0
        self.last_error: str | None = None
        self._procs_cache = _ProcsCache()
        self._layout = _NO_LAYOUT

    def feed(self, line: bytes | str) -> Message | None:
        # The sampler's own sample lines first, on the fast path: what it refuses takes the
        # general path below, which gives the same Sample or says what is wrong.
        if (
            type(line) is bytes
            and line.startswith(_SAMPLE_PREFIX)
            and len(line) <= _MAX_LINE_BYTES
            and self.hello is not None
        ):
            layout = self._layout
            if layout.hello is not self.hello:
                layout = self._layout = _sample_layout(self.hello)
            try:
                decode = layout.decode_signed if b"-" in line else layout.decode_unsigned
                attrs = _asdict(decode(line))
            except _FAST_REFUSED:
                pass
            else:
                # Attributes set at once, without the frozen dataclass's __init__ (one
                # object.__setattr__ per field): the same object as Sample(...) builds.
                attrs["columns"] = layout.columns
                s = _object_new(Sample)
                _object_setattr(s, "__dict__", attrs)
                return s
        return self._general(line)

    def _general(self, line: bytes | str) -> Message | None:
        """Any line, each of its values checked in Python after orjson parsed it."""
        if len(line) > _MAX_LINE_BYTES:
            self._bad(f"line of {len(line)} bytes exceeds the {protocol.MAX_LINE_BYTES} limit")
            return None
        if not line or line in _BLANK:
            return None
        try:
            obj = _loads(line)
        except orjson.JSONDecodeError as e:
            self._bad(f"not JSON: {e}")
            return None
        kind = obj.get("kind") if type(obj) is dict else None
        try:
            if kind == protocol.KIND_LINKS and isinstance(line, bytes):
                msg: Message = _parse_links(obj, self.hello, _array_brackets(line))
            else:
                msg = parse_object(obj, self.hello, self._procs_cache)
        except VersionError:
            raise
        except ProtocolError as e:
            self._bad(str(e))
            return None
        except (KeyError, TypeError, ValueError, OverflowError, RecursionError) as e:
            self._bad(f"malformed {obj.get('kind')!r}: {e}")
            return None
        if isinstance(msg, Hello):
            self.hello = msg
        return msg

    def feed_many(self, lines: Sequence[bytes | str]) -> list[Message]:
        out = []
        for line in lines:
            m = self.feed(line)
            if m is not None:
                out.append(m)
        return out

    def _bad(self, reason: str) -> None:
        self.bad_lines += 1
        self.last_error = reason
