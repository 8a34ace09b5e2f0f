"""Conformance: the three producers of ``hello``, ``info``, ``check`` and ``event`` (the nvml
backend on the fake pynvml, the sim backend, the laptop's nvidia-smi path on the real-format
fixtures) say the keys of ``gpufleet_sampler.protocol_schema`` with its types, and the same
keys as each other; the laptop's TypedDicts say the same.

Each producer runs its real code path: the nvml and sim backends through ``loop.Sampler``
(hello, and the events as the loop numbers them) and ``oneshot.answer`` (info, check, what
``gpufleet_sampler check`` prints), the nvidia-smi path through ``hello_obj`` and
``check_facts`` on ``-q -x`` dumps and its stream (the stand-in nvidia-smi) for its note. The
nvml backend's events come from a fault on every path that makes one: an Xid and a double-bit
ECC error from the event thread, a remapped row in the slow tier, a GPU lost mid-run. The
on-instance watchdog's events (in-process, dry run) are checked the same way.
"""

from __future__ import annotations

import argparse
import json
import time
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.link import sampler_argv as samplercmd
from gpufleet.core.wire import facts as typed
from gpufleet.core.wire import nvidia_smi as smi
from gpufleet_sampler import oneshot, protocol, protocol_schema
from gpufleet_sampler import protocol_schema as S
from gpufleet_sampler.backends.base import Backend
from gpufleet_sampler.backends.nvml import NvmlBackend
from gpufleet_sampler.backends.sim import SimBackend
from gpufleet_sampler.loop import Sampler
from gpufleet_sampler.watchdog import Watchdog

from tests.support.mig_profile import mig_profile
from tests.support.nvml_fake import fake_nvml, profile
from tests.support.paths import ROOT
from tests.support.smi_standin import local_smi
from tests.support.waiting import wait_until

SMI = ROOT / "tests" / "fixtures" / "nvidia-smi"

pytestmark = pytest.mark.usefixtures("generous_budget")

Answers = dict[str, Any]  # "hello", "info", "check", "events" of one producer run


def _args(command: str, backend: str, scenario: str | None, state: Path) -> argparse.Namespace:
    return argparse.Namespace(
        command=command, backend=backend, scenario=scenario, state_dir=str(state)
    )


def _sampler_answers(b: Backend, backend: str, scenario: str | None, state: Path) -> Answers:
    hello = Sampler(b, interval=1.0).hello()
    info = oneshot.answer(_args("info", backend, scenario, state), b)
    check = oneshot.answer(_args("check", backend, scenario, state), b)
    return {"hello": hello, "info": info, "check": check, "events": check["events"]}


def _nvml(prof: str | dict[str, Any], tmp: Path) -> Answers:
    with fake_nvml(prof):
        b = NvmlBackend(interval=1.0, events=False)
        try:
            out = _sampler_answers(b, "nvml", None, tmp)
        finally:
            b.close()
    return out


def _sim(scenario: str, tmp: Path) -> Answers:
    b = SimBackend(scenario=scenario, seed=0, interval=1.0)
    try:
        out = _sampler_answers(b, "sim", scenario, tmp)
        # The ecc-xid scenario's fault, a simulated hour in: ECC, remap, Xid, lost events.
        m0 = time.monotonic()
        loop = Sampler(b, interval=1.0)
        sent = [m for dt in (1800.0, 3600.0, 7200.0) for m in loop.step(m0 + dt, 1.7e9 + dt)]
        out["events"] = out["events"] + _events_of(sent)
    finally:
        b.close()
    return out


def _events_of(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in msgs if m["kind"] == protocol.KIND_EVENT]


def _nvml_fault(tmp: Path) -> Answers:
    prof = profile("h100x8")
    remap = {"seq": [[0, 0, 0, 0]] * 30 + [[0, 1, 1, 0]], "cycle": False}
    prof["gpus"] = [{}, {"nvmlDeviceGetRemappedRows": remap}]
    prof["inject"] = [{"gpu": 2, "from_tick": 3, "key": "*", "error": "GpuIsLost"}]
    prof["events"] = [
        {"gpu": 5, "tick": 5, "type": "nvmlEventTypeXidCriticalError", "data": 48},
        {"gpu": 6, "tick": 5, "type": "nvmlEventTypeDoubleBitEccError", "data": 0},
    ]
    with fake_nvml(prof) as fake:
        fake._fake.set_time(0.0)  # the driver raises both at tick 5, after the check below
        b = NvmlBackend(interval=1.0, slow_s=10.0, event_wait_ms=50)
        try:
            out = _sampler_answers(b, "nvml", None, tmp)
            loop = Sampler(b, interval=1.0)
            sent = []
            for t in range(1, 45):
                fake._fake.set_time(float(t))
                sent += loop.step(float(t), 1.7e9 + t)

            def event_thread_said() -> bool:
                # Its events reach the next tick after the thread took them from the driver.
                sent.extend(loop.step(45.0, 1.7e9 + 45))
                return {"xid", "ecc"} <= {e.get("type") for e in _events_of(sent)}

            wait_until(event_thread_said, 10, "the event thread's Xid and ECC events")
        finally:
            b.close()
    out["events"] = _events_of(sent)
    return out


def _smi_stream_events(tmp: Path, model: str) -> list[dict[str, Any]]:
    """The events the nvidia-smi stream says on a reconnect (from seq 5), read off the wire."""
    with pytest.MonkeyPatch.context() as mp:
        h, t = local_smi(tmp, mp, model)
        stream = t.stream(samplercmd.attach_argv(t.ensure_sampler(), h, 5))
        msgs = []
        try:
            for line in stream:
                msgs.append(json.loads(line))
                if msgs[-1]["kind"] == protocol.KIND_SAMPLE:
                    break
        finally:
            stream.close()
            t.close()
    return _events_of(msgs)


def _watchdog_events(tmp: Path) -> list[dict[str, Any]]:
    """A dry-run watchdog on one idle GPU: it warns, acts; armed again, it warns and stands
    down once the GPU works; armed again, it warns and is cancelled; then disarmed."""
    w = Watchdog(str(tmp / "wd.json"), {0: 80e9}, env={})
    cfg = {"action": "shutdown", "idle_s": 10, "grace_s": 20, "clear_s": 5, "dry_run": True}
    events: list[dict[str, Any]] = []

    def run(util: float, t0: int, t1: int) -> None:
        for t in range(t0, t1):
            row: list[Any] = [0] + [None] * len(protocol.COLUMN_NAMES)
            row[protocol.ROW_POS["util_gpu_pct"]] = util
            row[protocol.ROW_POS["mem_used_bytes"]] = 1e9
            events.extend(w.observe([row], 1000.0 + t, 1.7e9 + t))

    w.arm(dict(cfg))
    run(0.0, 0, 40)
    w.arm(dict(cfg))
    run(0.0, 40, 60)
    run(95.0, 60, 70)
    w.arm(dict(cfg))
    run(0.0, 70, 90)
    w.cancel()
    w.disarm()
    return events + w.take_queued()


def _smi(name: str) -> Answers:
    xml = (SMI / f"{name}-q.xml").read_bytes()
    inv = smi.parse_inventory(xml)
    plan = smi.FieldPlan.initial()
    asm = smi.QueryAssembler(plan.columns(), [g.index for g in inv.gpus])
    first = {}
    for line in (SMI / f"{name}-query.csv").read_text().splitlines()[: len(inv.gpus)]:
        for row in asm.feed(line):
            first[row.index] = row
    hello = smi.hello_obj(inv, plan, first, "run-1", 1.0, f"{name}-box")
    return {"hello": hello, "info": None, "check": dict(smi.check_facts(xml)), "events": []}


def _smi_with_stream(name: str, tmp: Path) -> Answers:
    out = _smi(name)
    out["events"] = _smi_stream_events(tmp, name)
    return out


# name -> how to run it. Every producer, on boards that differ in what they report: a
# HBM board with NVLink, a GeForce without ECC or NVLink, MIG slices, a fault with events.
PRODUCERS = {
    "nvml-h100x8": lambda tmp: _nvml("h100x8", tmp),
    "nvml-rtx4090x2": lambda tmp: _nvml("rtx4090x2", tmp),
    "nvml-h100-mig": lambda tmp: _nvml(mig_profile(), tmp),
    "nvml-h100x8-fault": _nvml_fault,
    "sim-ecc-xid": lambda tmp: _sim("ecc-xid", tmp),
    "sim-power-capped-4090": lambda tmp: _sim("power-capped-4090", tmp),
    "nvidia-smi-h200": lambda tmp: _smi_with_stream("h200", tmp),
    "nvidia-smi-rtx4090x2": lambda tmp: _smi("rtx4090x2"),
    "nvidia-smi-a100mig": lambda tmp: _smi("a100mig"),
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Answers]]:
    tmp = tmp_path_factory.mktemp("schema")
    yield {name: run(tmp) for name, run in PRODUCERS.items()}


def hello_problems(hello: Mapping[str, Any], where: str) -> list[str]:
    out = S.problems((S.HELLO_KEYS,), hello, S.HELLO_OPTIONAL, where)
    for g in hello.get("gpus") or []:
        out += gpu_entry_problems(g, f"{where}.gpus[{g.get('index')}].")
    return out


def gpu_entry_problems(g: Mapping[str, Any], where: str) -> list[str]:
    if protocol.MIG_KEY in g:
        return S.problems((S.GPU_KEYS, S.SLICE_KEYS), g, (), where)
    out = S.problems((S.GPU_KEYS, S.CARD_KEYS), g, S.GPU_OPTIONAL, where)
    nominal = g.get("nominal") or {}
    want = [k for k, _ in protocol.NOMINAL_KEYS]
    if list(nominal) != want:
        out.append(f"{where}nominal: keys {sorted(nominal)} are not NOMINAL_KEYS")
    return out


def check_problems(check: Mapping[str, Any], where: str) -> list[str]:
    out = S.problems((S.CHECK_KEYS,), check, (), where)
    for g in check.get("gpus") or []:
        out += S.problems((S.CHECK_GPU_KEYS,), g, (), f"{where}.gpus[{g.get('index')}].")
    return out


def key_sets(answers: dict[str, Answers], part: str) -> dict[str, tuple[str, ...]]:
    """Producer -> the sorted keys of ``part`` ("check", "check-gpu", "hello", "card")."""
    out = {}
    for name, a in answers.items():
        if part == "check":
            out[name] = tuple(sorted(a["check"]))
        elif part == "check-gpu":
            for g in a["check"]["gpus"]:
                out[f"{name}.gpus[{g['index']}]"] = tuple(sorted(g))
        elif part == "hello":
            keys = set(a["hello"]) & set(S.names(S.HELLO_KEYS))
            out[name] = tuple(sorted(keys))
        else:
            for g in a["hello"]["gpus"]:
                if protocol.MIG_KEY not in g:
                    keys = set(g) - set(S.names(S.GPU_OPTIONAL))
                    out[f"{name}.gpus[{g['index']}]"] = tuple(sorted(keys))
    return out


def test_every_producer_runs_and_covers_what_it_should(answers: dict[str, Answers]) -> None:
    # The run reached what the comparison needs: MIG slices from both MIG producers, events
    # from the fault scenario, several GPUs a check.
    slices = {
        name
        for name, a in answers.items()
        if any(protocol.MIG_KEY in g for g in a["hello"]["gpus"])
    }
    assert slices == {"nvml-h100-mig", "nvidia-smi-a100mig"}
    assert {e["type"] for e in answers["sim-ecc-xid"]["events"]} >= {"ecc", "xid", "gpu_lost"}
    assert len(answers["nvml-h100x8"]["check"]["gpus"]) == 8


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_check_says_the_schema(answers: dict[str, Answers], name: str) -> None:
    assert check_problems(answers[name]["check"], name) == []


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_hello_says_the_schema(answers: dict[str, Answers], name: str) -> None:
    assert hello_problems(answers[name]["hello"], name) == []


@pytest.mark.parametrize("name", [n for n in sorted(PRODUCERS) if not n.startswith("nvidia")])
def test_info_says_the_schema(answers: dict[str, Answers], name: str) -> None:
    info = answers[name]["info"]
    found = S.problems((S.INFO_KEYS,), info, (), name)
    for g in info["gpus"]:
        found += gpu_entry_problems(g, f"{name}.gpus[{g['index']}].")
    assert found == []


def test_events_say_the_schema(answers: dict[str, Answers]) -> None:
    # Every producer's events, as sent (kind, seq, t, the four, the type's own keys).
    found = [
        p
        for name, a in answers.items()
        for i, e in enumerate(a["events"])
        for p in S.event_problems(e, f"{name}.events[{i}].")
    ]
    assert found == []
    said = {name: sorted({e["type"] for e in a["events"]}) for name, a in answers.items()}
    assert said["nvml-h100x8-fault"] == ["ecc", "gpu_lost", "remap", "xid"]
    assert said["sim-ecc-xid"] == ["ecc", "gpu_lost", "remap", "xid"]
    assert said["nvidia-smi-h200"] == ["note"]
    # The same keys from every producer, the loop's numbering included.
    keys = {tuple(sorted(e)) for a in answers.values() for e in a["events"]}
    assert keys == {tuple(sorted(S.names(S.EVENT_HEADER, S.EVENT_KEYS)))}
    xid = next(e for e in answers["nvml-h100x8-fault"]["events"] if e["type"] == "xid")
    assert (xid["gpu"], xid["code"]) == (5, 48) and "Xid 48" in xid["message"]


def test_the_watchdogs_events_say_the_schema(tmp_path: Path) -> None:
    events = _watchdog_events(tmp_path)
    assert [e["message"].split(":")[0] for e in events] == [
        "idle for 10 s",
        "done",
        "idle for 10 s",
        "the host is working again",
        "idle for 10 s",
        "cancelled",
    ]
    assert [p for e in events for p in S.event_problems(e)] == []


def test_an_event_key_its_type_lacks_fails() -> None:
    ev = protocol_schema.event(
        protocol.EVENT_NOTE, None, None, "gap", gap_from=1, gap_to=3, reason="ring"
    )
    assert S.event_problems(protocol_schema.numbered(4, 1.7e9, ev)) == []
    assert S.event_problems(dict(ev, gap_to="3")) == ["gap_to: '3' is not int"]
    assert S.event_problems({k: v for k, v in ev.items() if k != "message"}) == ["message: missing"]
    with pytest.raises(S.SchemaError, match="keys a 'xid' event does not define: \\['phase'\\]"):
        protocol_schema.event(protocol.EVENT_XID, 0, 48, "Xid 48", phase="pending")
    with pytest.raises(S.SchemaError, match="'fault' is not one of"):
        protocol_schema.event("fault", 0, None, "?")


@pytest.mark.parametrize("part", ["check", "check-gpu", "hello", "card"])
def test_every_producer_says_the_same_keys(answers: dict[str, Answers], part: str) -> None:
    sets = key_sets(answers, part)
    assert len(set(sets.values())) == 1, "\n".join(f"{k}: {v}" for k, v in sets.items())


def test_a_key_missing_from_one_producer_fails(answers: dict[str, Answers]) -> None:
    # What the conformance tests above do when one producer stops saying a fact.
    broken = {name: dict(a) for name, a in answers.items()}
    check = dict(broken["sim-ecc-xid"]["check"])
    gpus = [dict(g) for g in check["gpus"]]
    del gpus[1]["remap_pending"]
    check["gpus"] = gpus
    broken["sim-ecc-xid"]["check"] = check
    assert check_problems(check, "sim") == ["sim.gpus[1].remap_pending: missing"]
    sets = key_sets(broken, "check-gpu")
    assert len(set(sets.values())) == 2
    # A producer that forgets the key while building is stopped at once, naming it.
    facts = dict(answers["nvidia-smi-h200"]["check"]["gpus"][0])
    del facts["mig_slices"]
    with pytest.raises(S.SchemaError, match="missing \\['mig_slices'\\]"):
        protocol_schema.check_gpu(facts)


def test_a_wrong_type_or_an_unknown_key_fails(answers: dict[str, Answers]) -> None:
    g = dict(answers["nvml-h100x8"]["check"]["gpus"][0])
    g["pcie_gen"] = "4"
    g["pcie_speed"] = 4
    found = S.problems((S.CHECK_GPU_KEYS,), g, (), "")
    assert found == ["pcie_gen: '4' is not int|null", "pcie_speed: not in the schema"]
    with pytest.raises(S.SchemaError, match="unknown \\['pcie_speed'\\]"):
        protocol_schema.check_gpu(g)


def test_nvml_numbers_become_the_documented_names(answers: dict[str, Answers]) -> None:
    # NVML gives enums and 0/1; the wire says names and bools, as sim and nvidia-smi do.
    card = answers["nvml-h100x8"]["hello"]["gpus"][0]
    assert card["virtualization_mode"] == "passthrough" and card["persistence_mode"] is True
    assert card["ecc_mode"] is True and card["mig_mode"] is False
    assert card["arch"] == "hopper" and card["compute_mode"] == "default"
    smi_card = answers["nvidia-smi-h200"]["hello"]["gpus"][0]
    assert smi_card["persistence_mode"] is True and smi_card["virtualization_mode"]


# ----------------------------------------------------------------------------- the laptop's types

_JSON = {
    int: "int",
    float: "number",
    bool: "bool",
    str: "str",
    list: "list",
    dict: "object",
    type(None): "null",
}


def _json_types(t: Any) -> str:
    if typing.get_origin(t) in (typing.Union, types.UnionType):
        return "|".join(_json_types(a) for a in typing.get_args(t))
    return _JSON[typing.get_origin(t) or t]


@pytest.mark.parametrize(
    ("typed_dict", "tables"),
    [
        (typed.CheckGpuFacts, (S.CHECK_GPU_KEYS,)),
        (typed.CheckFacts, (S.CHECK_KEYS,)),
        (typed.InfoFacts, (S.INFO_KEYS,)),
        (typed.HelloGpuFacts, (S.GPU_KEYS, S.CARD_KEYS, S.GPU_OPTIONAL)),
        (typed.HelloSliceFacts, (S.GPU_KEYS, S.SLICE_KEYS)),
    ],
)
def test_the_laptop_types_say_the_schema(typed_dict: Any, tables: Any) -> None:
    hints = typing.get_type_hints(typed_dict)
    schema = {f[0]: f[1] for t in tables for f in t}
    assert sorted(hints) == sorted(schema)
    assert {k: _json_types(v) for k, v in hints.items()} == schema
