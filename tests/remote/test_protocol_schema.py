"""Conformance: the three producers of ``hello``, ``info``, ``check`` and ``event`` (the nvml
backend on the fake pynvml, the sim backend, the laptop's nvidia-smi path on the real-format
fixtures) say the keys of ``gpufleet_sampler.protocol_schema`` with its types, and the same
keys as each other; the laptop's TypedDicts say the same.

Each producer runs its real code path: the nvml and sim backends through ``loop.Sampler``
(hello) and ``oneshot.answer`` (info, check, what ``gpufleet_sampler check`` prints), the
nvidia-smi path through ``hello_obj`` and ``check_facts`` on ``-q -x`` dumps.
"""

from __future__ import annotations

import argparse
import time
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.wire import facts as typed
from gpufleet.core.wire import nvidia_smi as smi
from gpufleet_sampler import oneshot, protocol, protocol_schema
from gpufleet_sampler import protocol_schema as S
from gpufleet_sampler.backends.base import Backend
from gpufleet_sampler.backends.nvml import NvmlBackend
from gpufleet_sampler.backends.sim import SimBackend
from gpufleet_sampler.loop import Sampler
from nvml_fake import fake_nvml
from test_nvml_mig import mig_profile

ROOT = Path(__file__).resolve().parents[2]
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
        for dt in (1800.0, 3600.0, 7200.0):
            b.tick(m0 + dt)
        out["events"] = out["events"] + b.events(m0 + 7200.0)
    finally:
        b.close()
    return out


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


# name -> how to run it. Every producer, on boards that differ in what they report: a
# HBM board with NVLink, a GeForce without ECC or NVLink, MIG slices, a fault with events.
PRODUCERS = {
    "nvml-h100x8": lambda tmp: _nvml("h100x8", tmp),
    "nvml-rtx4090x2": lambda tmp: _nvml("rtx4090x2", tmp),
    "nvml-h100-mig": lambda tmp: _nvml(mig_profile(), tmp),
    "sim-ecc-xid": lambda tmp: _sim("ecc-xid", tmp),
    "sim-power-capped-4090": lambda tmp: _sim("power-capped-4090", tmp),
    "nvidia-smi-h200": lambda tmp: _smi("h200"),
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
    name = "sim-ecc-xid"
    events = answers[name]["events"]
    assert events
    for e in events:
        assert e["type"] in protocol.EVENT_TYPES
        # A type may add its own keys (a watchdog's phase); the four are always there.
        own = {k: v for k, v in e.items() if k in S.names(S.EVENT_KEYS)}
        assert S.problems((S.EVENT_KEYS,), own, (), f"{name}: ") == []


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
