"""GPU processes seen from inside a container: the sampler runs in a PID namespace of its own
(``unshare --pid --fork --mount-proc``, root only), its GPU processes hold device files of a
test-only device directory, and the fake NVML reports their PIDs as the outside numbers them,
as the real driver does from a container. The sampler must name each process by its PID here,
on the right GPU, and never take an NVML PID for an unrelated process that happens to have
that number here."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet.cli.commands import kill as kill_cmd
from gpufleet.cli.errors import EXIT_REFUSED, CliError
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.link.transport import LocalTransport
from gpufleet.core.text.catalogue import finding_sentence
from gpufleet.core.verdicts.health import evaluate_check
from gpufleet_sampler import protocol

from tests.support.nvml_fake import FAKES, ROOT, profile
from tests.support.pidns import PidNamespace

pytestmark = pytest.mark.root

GIB = 1 << 30
GPUS = 4
STREAM_ONCE = ("--backend", "nvml", "--count", "1", "--interval", "0.2")


@pytest.fixture
def ns() -> Iterator[PidNamespace]:
    space = PidNamespace()
    try:
        yield space
    finally:
        space.close()


@pytest.fixture
def dev(tmp_path: Path) -> Path:
    """A test-only device directory: nvidia0..3 and nvidiactl as plain files."""
    d = tmp_path / "dev"
    d.mkdir()
    for name in [f"nvidia{i}" for i in range(GPUS)] + ["nvidiactl", "nvidia-uvm"]:
        (d / name).write_bytes(b"\0" * 4096)  # a page, so that a holder can map it
    return d


def write_profile(
    path: Path, per_gpu: dict[int, list[dict[str, Any]]], base_used: int = GIB
) -> Path:
    """A 4-GPU H100 profile whose process lists are ``per_gpu`` (outer PIDs) and whose used
    memory is the processes' plus ``base_used``."""
    prof = profile("h100x8")
    prof["count"] = GPUS
    prof["defaults"]["nvmlDeviceGetProcessUtilization"] = []
    prof["gpus"] = []
    mem = dict(prof["defaults"]["nvmlDeviceGetMemoryInfo_v2"])
    for g in range(GPUS):
        plist = per_gpu.get(g, [])
        used = base_used + sum(int(p["usedGpuMemory"] or 0) for p in plist)
        prof["gpus"].append(
            {
                "nvmlDeviceGetComputeRunningProcesses": plist,
                "nvmlDeviceGetGraphicsRunningProcesses": [],
                "nvmlDeviceGetMemoryInfo_v2": dict(mem, used=used, free=mem["total"] - used),
            }
        )
    path.write_text(json.dumps(prof), encoding="utf-8")
    return path


def sampler_env(prof: Path, dev: Path) -> dict[str, str]:
    env = dict(os.environ)
    # Where the sampler runs is found out from /proc here: that is what is under test.
    env.pop("GPUFLEET_PID_NAMESPACE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(FAKES), str(ROOT / "remote")])
    env["GPUFLEET_FAKE_NVML"] = str(prof)
    env["GPUFLEET_DEV_DIR"] = str(dev)
    return env


def sampler(ns: PidNamespace, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    p = ns.run([sys.executable, "-m", "gpufleet_sampler", *args], env=env)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert lines, (p.returncode, p.stdout, p.stderr)
    return p.returncode, json.loads(lines[-1])


def check(ns: PidNamespace, env: dict[str, str]) -> dict[str, Any]:
    rc, out = sampler(ns, env, "check", "--backend", "nvml")
    assert rc == 0, out
    return out


def rows(out: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for g in out["gpus"] for p in g["process_list"]]


def entry(outer: int, mem: int, while_running: int | None = None) -> dict[str, Any]:
    e: dict[str, Any] = {"pid": outer, "usedGpuMemory": mem}
    if while_running is not None:
        e["while_running"] = while_running
    return e


def test_one_process_on_four_gpus_is_matched_exactly(
    ns: PidNamespace, dev: Path, tmp_path: Path
) -> None:
    c = ns.holder(dev, "--hold", "0,1,2,3", "--ctl", "--session")
    prof = write_profile(tmp_path / "p.json", {g: [entry(c["outer"], 3 * GIB)] for g in range(4)})
    out = check(ns, sampler_env(prof, dev))
    host = out["host"]
    assert host["where"] == protocol.WHERE_CONTAINER and host["own_pid_namespace"] is True
    assert host["nvml_pids"]["holding"] == 0 and host["nvml_pids"]["entries"] == 4
    got = rows(out)
    assert [(p["gpu"], p["pid"], p["host_pid"], p["mapping"]) for p in got] == [
        (g, c["pid"], c["outer"], protocol.MAP_EXACT) for g in range(4)
    ]
    assert all(p["name"] == "python3"[:15] or p["name"].startswith("python") for p in got)
    assert all(p["start_ticks"] is not None and p["holds_device"] for p in got)
    assert [g["minor"] for g in out["gpus"]] == [0, 1, 2, 3]
    assert out["gpus"][0]["device"] == str(dev / "nvidia0")
    assert all(g["processes_not_here"] == 0 for g in out["gpus"])
    # hello says the same, first thing on every stream.
    p = ns.run(
        [sys.executable, "-m", "gpufleet_sampler", "stream", *STREAM_ONCE],
        env=sampler_env(prof, dev),
    )
    assert p.returncode == 0 and p.stdout, p.stderr
    hello = json.loads(p.stdout.splitlines()[0])
    assert hello["kind"] == "hello", p.stderr
    assert hello["host"]["where"] == protocol.WHERE_CONTAINER
    assert any("kthreadd" in e for e in hello["host"]["where_evidence"])
    assert [g["minor"] for g in hello["gpus"]] == [0, 1, 2, 3]
    procs = next(json.loads(ln) for ln in p.stdout.splitlines() if '"kind":"procs"' in ln)
    assert {(x["pid"], x["mapping"]) for x in procs["procs"]} == {(c["pid"], protocol.MAP_EXACT)}


def test_one_job_per_gpu_each_opening_every_gpu(
    ns: PidNamespace, dev: Path, tmp_path: Path
) -> None:
    """As CUDA does, every job opens all four device files; each maps only its own GPU's
    (its context). Started in the order GPU 2, 0, 3, 1."""
    order = [2, 0, 3, 1]
    jobs = {
        g: ns.holder(dev, "--hold", "0,1,2,3", "--ctl", "--map", str(g), "--name", f"job{g}")
        for g in order
    }
    prof = write_profile(
        tmp_path / "p.json", {g: [entry(j["outer"], GIB)] for g, j in jobs.items()}
    )
    got = rows(check(ns, sampler_env(prof, dev)))
    assert {(p["gpu"], p["pid"], p["name"], p["mapping"]) for p in got} == {
        (g, j["pid"], f"job{g}", protocol.MAP_EXACT) for g, j in jobs.items()
    }


def test_mixed_container(ns: PidNamespace, dev: Path, tmp_path: Path) -> None:
    """Two processes on GPU 0, one on all four, a launcher with two workers on GPU 1, a
    process that holds GPU 2 with no memory, and another tenant's process on GPU 3 whose host
    PID is the PID of an unrelated process here."""
    a = ns.holder(dev, "--hold", "0", "--ctl", "--session", "--name", "job-a")
    b = ns.holder(dev, "--hold", "0", "--ctl", "--session", "--name", "job-b")
    c = ns.holder(dev, "--hold", "0,1,2,3", "--ctl", "--session", "--name", "job-c")
    tree = ns.holder(
        dev, "--workers", "2", "--worker-hold", "1", "--ctl", "--session", "--name", "launch"
    )
    d = ns.holder(dev, "--hold", "2", "--session", "--name", "job-d")
    unrelated = ns.holder(dev, "--session", "--name", "unrelated")  # holds no device
    w1, w2 = tree["outer_workers"]
    per_gpu = {
        0: [entry(a["outer"], 1 * GIB), entry(b["outer"], 2 * GIB), entry(c["outer"], 3 * GIB)],
        1: [entry(c["outer"], 3 * GIB), entry(w1, 4 * GIB), entry(w2, 4 * GIB)],
        2: [entry(c["outer"], 3 * GIB)],
        # Another tenant: its host PID collides with a process here.
        3: [entry(c["outer"], 3 * GIB), entry(unrelated["pid"], 5 * GIB)],
    }
    prof = write_profile(tmp_path / "p.json", per_gpu)
    out = check(ns, sampler_env(prof, dev))
    assert out["host"]["where"] == protocol.WHERE_CONTAINER
    by = {(p["gpu"], p["host_pid"], p["pid"]): p for p in rows(out)}
    here = {(p["gpu"], p["pid"]): p for p in rows(out) if p["mapping"] != protocol.MAP_NOT_HERE}

    # Each process here by its name, on the GPUs it uses.
    names = {(p["gpu"], p["name"]) for p in rows(out) if p["mapping"] != protocol.MAP_NOT_HERE}
    assert names == {
        (0, "job-a"),
        (0, "job-b"),
        *((g, "job-c") for g in range(4)),
        (1, "launch-w"),
        (2, "job-d"),
    }
    assert not any(p["name"] == "unrelated" for p in rows(out))
    # Two processes on one GPU: told apart by creation order.
    assert here[(0, a["pid"])]["host_pid"] == a["outer"]
    assert here[(0, b["pid"])]["host_pid"] == b["outer"]
    assert here[(0, a["pid"])]["mem_bytes"] == GIB and here[(0, b["pid"])]["mem_bytes"] == 2 * GIB
    assert {here[(0, a["pid"])]["mapping"], here[(0, b["pid"])]["mapping"]} <= {
        protocol.MAP_EXACT,
        protocol.MAP_PROBABLE,
    }
    # One process on four GPUs: the same PID here on each.
    for g in range(4):
        assert here[(g, c["pid"])]["host_pid"] == c["outer"], g
    # The workers under one parent, each with its own memory; the parent holds nothing.
    assert here[(1, tree["workers"][0])]["host_pid"] == w1
    assert here[(1, tree["workers"][1])]["host_pid"] == w2
    assert not any(p["pid"] == tree["pid"] for p in rows(out))
    # A holder with no entry.
    no_mem = here[(2, d["pid"])]
    assert no_mem["mapping"] == protocol.MAP_NO_MEMORY and no_mem["host_pid"] is None
    assert no_mem["mem_bytes"] is None and no_mem["start_ticks"] is not None
    # Another tenant's entry: not taken for the unrelated process with that PID here.
    tenant = by[(3, unrelated["pid"], unrelated["pid"])]
    assert tenant["mapping"] == protocol.MAP_NOT_HERE
    assert tenant["start_ticks"] is None and tenant["name"] is None and tenant["cmd"] is None
    assert tenant["mem_bytes"] == 5 * GIB
    assert out["gpus"][3]["processes_not_here"] == 1
    assert out["gpus"][3]["mem_not_here_bytes"] == 5 * GIB
    assert all(
        p["pid"] != unrelated["pid"] or p["mapping"] == protocol.MAP_NOT_HERE for p in rows(out)
    )

    # check's verdicts: the memory held outside this container warns, on its GPU only.
    findings = evaluate_check(out)
    away = [f for f in findings if f.id == "not_here"]
    assert [(f.gpu, f.verdict) for f in away] == [(3, "warn")]
    assert "5.0 GiB" in finding_sentence(away[0])
    assert "not in this container" in finding_sentence(away[0])
    where = [f for f in findings if f.id == "where"]
    assert [(f.verdict, f.values["variant"]) for f in where] == [("info", "container")]
    assert "own PID namespace" in finding_sentence(where[0])
    # The processes here are the user's own: no "someone else's process" warning for them.
    assert all(f.verdict == "pass" for f in findings if f.id == "processes")


def _ticks_inside(ns: PidNamespace, inner: int) -> int:
    p = ns.run(["cat", f"/proc/{inner}/stat"])
    assert p.returncode == 0, p.stderr
    return int(p.stdout.rsplit(")", 1)[1].split()[19])


def test_tree_kill_of_a_parent_frees_its_workers_memory(
    ns: PidNamespace, dev: Path, tmp_path: Path
) -> None:
    tree = ns.holder(dev, "--workers", "2", "--worker-hold", "1", "--ctl", "--session")
    bystander = ns.holder(dev, "--hold", "1", "--ctl", "--session")
    w1, w2 = tree["outer_workers"]
    i1, i2 = tree["workers"]
    prof = write_profile(
        tmp_path / "p.json",
        {
            1: [
                entry(w1, 4 * GIB, while_running=i1),
                entry(w2, 4 * GIB, while_running=i2),
                entry(bystander["outer"], GIB, while_running=bystander["pid"]),
            ]
        },
    )
    env = sampler_env(prof, dev)
    # The parent holds no memory itself: its row is not even listed; the kill names it.
    ticks = _ticks_inside(ns, tree["pid"])
    rc, out = sampler(
        ns,
        env,
        "kill",
        "--pid",
        str(tree["pid"]),
        "--start-time",
        str(ticks),
        "--tree",
        "--watch",
        "20",
    )
    assert rc == 0, out
    assert out["result"] == "exited"
    assert sorted(m["pid"] for m in out["tree"]) == sorted([tree["pid"], i1, i2])
    assert all(m["result"] == "exited" for m in out["tree"])
    mem = out["memory"]
    assert mem["watched"] and mem["freed"] is True, mem
    assert mem["released_bytes"] == 8 * GIB
    assert mem["gpus"] == [{"gpu": 1, "before_bytes": GIB + 9 * GIB, "after_bytes": GIB + GIB}]
    assert "8.0 GiB on GPU 1" in mem["message"]
    for outer in (tree["outer"], w1, w2):
        assert not ns.alive(outer)
    assert ns.alive(bystander["outer"])


def test_orphaned_workers_are_found_and_a_tree_kill_ends_them(
    ns: PidNamespace, dev: Path, tmp_path: Path
) -> None:
    tree = ns.holder(dev, "--workers", "2", "--worker-hold", "2", "--ctl", "--session")
    w1, w2 = tree["outer_workers"]
    i1, i2 = tree["workers"]
    prof = write_profile(
        tmp_path / "p.json",
        {2: [entry(w1, 2 * GIB, while_running=i1), entry(w2, 2 * GIB, while_running=i2)]},
    )
    env = sampler_env(prof, dev)
    os.kill(tree["outer"], 9)  # the job dies; its workers stay, holding the GPU
    deadline = time.monotonic() + 30
    while ns.alive(tree["outer"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    got = [p for p in rows(check(ns, env)) if p["gpu"] == 2]
    assert sorted(p["pid"] for p in got) == [i1, i2]
    assert all(p["orphan"] is True for p in got), got
    orphans = [f for f in evaluate_check(check(ns, env)) if f.id == "orphans"]
    assert [(f.gpu, f.verdict) for f in orphans] == [(2, "warn")]
    assert "still hold the GPU after their job ended" in finding_sentence(orphans[0])
    first = next(p for p in got if p["pid"] == i1)
    rc, out = sampler(
        ns, env, "kill", "--pid", str(i1), "--start-time", str(first["start_ticks"]),
        "--tree", "--watch", "20",
    )  # fmt: skip
    assert rc == 0, out
    # The other worker is in the same process group, whose leader is gone: it goes too.
    assert sorted(m["pid"] for m in out["tree"]) == [i1, i2]
    assert out["memory"]["freed"] is True and out["memory"]["released_bytes"] == 4 * GIB
    assert not ns.alive(w1) and not ns.alive(w2)


def _cli_args(pid: int, **kw: Any) -> argparse.Namespace:
    base: dict[str, Any] = dict(
        pid=pid, signal="TERM", grace=5.0, tree=False, watch=10.0, yes=True, accept_new=False
    )
    base.update(kw)
    return argparse.Namespace(**base)


def test_gpufleet_kill_ends_the_right_process_and_no_other(
    ns: PidNamespace,
    dev: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The laptop's ``gpufleet kill`` through a fleet whose transport runs the sampler inside
    the namespace, as an SSH login into a container would."""
    a = ns.holder(dev, "--hold", "0", "--ctl", "--session")
    b = ns.holder(dev, "--hold", "0", "--ctl", "--session")
    unrelated = ns.holder(dev, "--session")
    prof = write_profile(
        tmp_path / "p.json",
        {
            0: [
                entry(a["outer"], GIB, while_running=a["pid"]),
                entry(b["outer"], 2 * GIB, while_running=b["pid"]),
            ],
            # Another tenant whose host PID is the PID of the unrelated process here.
            1: [entry(unrelated["pid"], 5 * GIB)],
        },
    )
    monkeypatch.delenv("GPUFLEET_PID_NAMESPACE", raising=False)
    for k, v in sampler_env(prof, dev).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("PYTHONPATH", str(FAKES))
    prefix = [*ns.enter(), sys.executable, "-m", "gpufleet_sampler"]
    host = HostConfig(name="box", transport="local", backend="nvml")

    def fleet() -> Fleet:
        return Fleet(
            [host],
            state_dir=str(tmp_path / "state"),
            opener=lambda h: LocalTransport(h, prefix=prefix),
        )

    # The tenant's host PID names an unrelated process here: refused, and it lives.
    with pytest.raises(CliError) as e:
        kill_cmd.kill_on(fleet(), host, _cli_args(unrelated["pid"]))
    assert e.value.exit_code == EXIT_REFUSED, str(e.value)
    assert "not in this container" in str(e.value)
    assert ns.alive(unrelated["outer"])

    # B's row, addressed by its PID here: B ends, A and the unrelated process do not.
    assert kill_cmd.kill_on(fleet(), host, _cli_args(b["pid"])) == 0
    out = capsys.readouterr()
    assert f"host PID (NVML): {b['outer']}" in out.err
    assert "GPU memory freed" in out.out and "2.0 GiB on GPU 0" in out.out
    assert not ns.alive(b["outer"])
    assert ns.alive(a["outer"]) and ns.alive(unrelated["outer"])
