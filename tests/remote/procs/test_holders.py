"""Matching NVML's entries (host PIDs) to the processes here that hold each GPU's device file,
as gpu_holders.match does inside a container, and the device-file scan on real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpufleet_sampler import protocol
from gpufleet_sampler.procs import holders as gh

from tests.support import nvml_fake
from tests.support.paths import SUPPORT

GIB = 1 << 30
MINORS = {0: 0, 1: 1, 2: 2, 3: 3}  # minor -> GPU index
HOLD = ("--hold", "3", "--ctl")


def holder(
    pid: int, ticks: int, *minors: int, ppid: int = 1, mapped: tuple[int, ...] = ()
) -> gh.Holder:
    return gh.Holder(pid, ticks, ppid, pid, "S", frozenset(minors), True, frozenset(mapped))


def table(rows: list[gh.Row]) -> set[tuple[int, int | None, int | None, str]]:
    return {(r.gpu, r.pid, r.host_pid, r.mapping) for r in rows}


def test_one_entry_and_one_holder_per_gpu_is_exact() -> None:
    hs = {7: holder(7, 100, 0, 1, 2, 3)}
    es = [gh.Entry(g, 4242, GIB, "C", None) for g in range(4)]
    assert table(gh.match(es, hs, MINORS, own_ns=True)) == {
        (g, 7, 4242, protocol.MAP_EXACT) for g in range(4)
    }


def test_a_unique_assignment_across_gpus_is_exact() -> None:
    # GPU 1 has only process x: that pins x, and GPU 0's other entry can only be y.
    hs = {10: holder(10, 100, 0, 1), 11: holder(11, 90, 0)}
    es = [
        gh.Entry(0, 5000, GIB, "C", None),
        gh.Entry(0, 5100, GIB, "C", None),
        gh.Entry(1, 5100, GIB, "C", None),
    ]
    assert table(gh.match(es, hs, MINORS, own_ns=True)) == {
        (0, 11, 5000, protocol.MAP_EXACT),
        (0, 10, 5100, protocol.MAP_EXACT),
        (1, 10, 5100, protocol.MAP_EXACT),
    }


def test_two_on_one_gpu_go_by_creation_order_and_are_probable() -> None:
    hs = {20: holder(20, 300, 0), 21: holder(21, 200, 0)}
    es = [gh.Entry(0, 9001, GIB, "C", None), gh.Entry(0, 8000, 2 * GIB, "C", None)]
    # 21 started first, so it is the lower host PID.
    assert table(gh.match(es, hs, MINORS, own_ns=True)) == {
        (0, 21, 8000, protocol.MAP_PROBABLE),
        (0, 20, 9001, protocol.MAP_PROBABLE),
    }


def test_leftovers_are_not_here_and_no_memory() -> None:
    hs = {30: holder(30, 100, 2)}
    es = [gh.Entry(3, 30, 5 * GIB, "C", None)]  # host PID 30 = our PID 30, on another GPU
    assert table(gh.match(es, hs, MINORS, own_ns=True)) == {
        (3, None, 30, protocol.MAP_NOT_HERE),
        (2, 30, None, protocol.MAP_NO_MEMORY),
    }


def test_forked_workers_that_inherited_the_fds_do_not_take_the_parents_memory() -> None:
    hs = {40: holder(40, 100, 0, ppid=1), 41: holder(41, 100, 0, ppid=40)}
    hs[42] = holder(42, 100, 0, ppid=40)
    es = [gh.Entry(0, 7000, GIB, "C", None)]
    got = table(gh.match(es, hs, MINORS, own_ns=True))
    assert (0, 40, 7000, protocol.MAP_PROBABLE) in got
    assert {(0, 41, None, protocol.MAP_NO_MEMORY), (0, 42, None, protocol.MAP_NO_MEMORY)} <= got


def test_workers_that_own_the_memory_under_a_parent_holding_the_device() -> None:
    # The launcher opened the device, then forked one worker per entry.
    hs = {60: holder(60, 100, 1, ppid=1), 61: holder(61, 101, 1, ppid=60)}
    hs[62] = holder(62, 101, 1, ppid=60)
    es = [gh.Entry(1, 9100, GIB, "C", None), gh.Entry(1, 9101, GIB, "C", None)]
    got = table(gh.match(es, hs, MINORS, own_ns=True))
    assert got == {
        (1, 61, 9100, protocol.MAP_PROBABLE),
        (1, 62, 9101, protocol.MAP_PROBABLE),
        (1, 60, None, protocol.MAP_NO_MEMORY),
    }


def test_one_job_per_gpu_each_holding_every_gpus_file_goes_by_creation_order() -> None:
    # CUDA opens the device file of every GPU it may use: each job holds all four. The job
    # on GPU 2 started first, then GPU 0's, GPU 3's, GPU 1's.
    order = [2, 0, 3, 1]
    hs = {100 + k: holder(100 + k, 1000 + k, 0, 1, 2, 3) for k in range(4)}
    es = [gh.Entry(g, 7000 + k, GIB, "C", None) for k, g in enumerate(order)]
    assert table(gh.match(es, hs, MINORS, own_ns=True)) == {
        (g, 100 + k, 7000 + k, protocol.MAP_PROBABLE) for k, g in enumerate(order)
    }


def test_the_device_file_a_job_has_mapped_names_its_gpu_exactly() -> None:
    # The same jobs, each with its own GPU's file mapped (its CUDA context): no guessing, even
    # with host PIDs in another order than the start times.
    order = [2, 0, 3, 1]
    hs = {100 + k: holder(100 + k, 1000 + k, 0, 1, 2, 3, mapped=(g,)) for k, g in enumerate(order)}
    es = [gh.Entry(g, 9000 - k, GIB, "C", None) for k, g in enumerate(order)]
    assert table(gh.match(es, hs, MINORS, own_ns=True)) == {
        (g, 100 + k, 9000 - k, protocol.MAP_EXACT) for k, g in enumerate(order)
    }


def test_an_entry_that_fits_nothing_in_order_is_not_here_and_shifts_nothing() -> None:
    # A tenant's entry with a low host PID on GPU 3 must not take the first process that fits.
    hs = {1: holder(1, 10, 0), 2: holder(2, 20, 0, 1, 2, 3), 3: holder(3, 30, 1)}
    es = [
        gh.Entry(3, 50, GIB, "C", None),
        gh.Entry(0, 900, GIB, "C", None),
        gh.Entry(0, 901, GIB, "C", None),
        gh.Entry(1, 901, GIB, "C", None),
        gh.Entry(3, 901, GIB, "C", None),
        gh.Entry(1, 902, GIB, "C", None),
    ]
    got = table(gh.match(es, hs, MINORS, own_ns=True))
    assert (3, None, 50, protocol.MAP_NOT_HERE) in got
    here = {(g, pid, hp) for g, pid, hp, m in got if m != protocol.MAP_NOT_HERE}
    assert here == {(0, 1, 900), (0, 2, 901), (1, 2, 901), (3, 2, 901), (1, 3, 902)}


def test_in_the_hosts_namespace_the_nvml_pid_is_the_process() -> None:
    hs = {50: holder(50, 100, 0), 51: holder(51, 100, 1)}
    es = [gh.Entry(0, 50, GIB, "C", None)]
    assert table(gh.match(es, hs, MINORS, own_ns=False)) == {
        (0, 50, 50, protocol.MAP_EXACT),
        (1, 51, None, protocol.MAP_NO_MEMORY),
    }


@pytest.fixture
def holding(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("nvidia0", "nvidia3", "nvidiactl"):
        (dev / name).write_bytes(b"")
    p = subprocess.Popen(
        [sys.executable, str(SUPPORT / "gpu_holder_proc.py"), str(dev), *HOLD],
        stdout=subprocess.PIPE,
    )
    assert p.stdout is not None and p.stdout.readline()
    yield dev, p
    p.kill()
    p.wait()


def test_scan_finds_a_real_process_holding_a_device_file(
    holding: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    dev, p = holding
    found = gh.scan(str(dev))
    assert set(found.holders) == {p.pid}
    h = found.holders[p.pid]
    assert h.minors == frozenset({3}) and h.other
    assert h.ppid == os.getpid() and h.start_ticks > 0
    assert found.processes > 1


def test_the_test_harness_can_say_which_namespace_nvml_numbers_pids_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert nvml_fake.PID_NAMESPACE_ENV == gh.PID_NAMESPACE_ENV
    monkeypatch.setenv(gh.PID_NAMESPACE_ENV, "own")
    got = gh.detect_where()
    assert got["where"] == protocol.WHERE_CONTAINER and got["own_pid_namespace"] is True
    assert "test harness" in got["evidence"][0]
    monkeypatch.setenv(gh.PID_NAMESPACE_ENV, "host")
    assert gh.detect_where()["own_pid_namespace"] is False
