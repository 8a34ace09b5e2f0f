"""procfs: process identity from /proc (start ticks, user, name) and secret redaction of
command lines, against real processes and hand-written stat files."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpufleet_sampler.procs import procfs

WEIRD_COMM = "a) b (c) d"[:15]


@pytest.fixture
def weird_child() -> Iterator[subprocess.Popen[bytes]]:
    """A real process whose comm holds spaces and parentheses, as a hostile job could set."""
    code = (
        "import sys,time\n"
        f"open('/proc/self/comm','w').write({WEIRD_COMM!r})\n"
        "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
        "time.sleep(60)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code, "--api-key=hunter2"], stdout=subprocess.PIPE)
    assert p.stdout is not None
    assert p.stdout.readline() == b"ready\n"
    yield p
    p.kill()
    p.wait()


def test_start_ticks_of_real_process_with_hostile_comm(
    weird_child: subprocess.Popen[bytes],
) -> None:
    pid = weird_child.pid
    assert procfs.proc_name(pid) == WEIRD_COMM
    ticks = procfs.start_ticks(pid)
    assert isinstance(ticks, int)
    # The child started after this test process, and its start time never changes.
    own = procfs.start_ticks(os.getpid())
    assert own is not None and ticks >= own
    assert procfs.start_ticks(pid) == ticks
    assert procfs.proc_state(pid) in ("S", "R")
    assert procfs.proc_user(pid) == pwd.getpwuid(os.getuid()).pw_name
    cmd = procfs.proc_cmdline(pid)
    assert cmd is not None and "--api-key=***" in cmd and "hunter2" not in cmd


def test_stat_parsing_splits_at_last_paren(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Fields 3..52 of a real stat line, with field 22 (starttime) = 987654321.
    rest = ["S"] + [str(n) for n in range(4, 22)] + ["987654321"] + ["0"] * 30
    proc = tmp_path / "proc"
    for pid, comm in ((11, "evil) 1 2 (x"), (12, "((("), (13, "plain")):
        d = proc / str(pid)
        d.mkdir(parents=True)
        (d / "stat").write_text(f"{pid} ({comm}) " + " ".join(rest) + "\n")
    (proc / "14").mkdir()
    (proc / "14" / "stat").write_text("14 (truncated) S 1 2\n")
    monkeypatch.setattr(procfs, "PROC", str(proc))
    assert procfs.start_ticks(11) == 987654321
    assert procfs.start_ticks(12) == 987654321
    assert procfs.start_ticks(13) == 987654321
    assert procfs.proc_state(11) == "S"
    assert procfs.start_ticks(14) is None
    assert procfs.start_ticks(15) is None


def test_gone_process_is_none() -> None:
    p = subprocess.Popen(["true"])
    p.wait()
    assert procfs.start_ticks(p.pid) is None
    assert procfs.proc_user(p.pid) is None
    assert procfs.proc_name(p.pid) is None
    assert procfs.proc_cmdline(p.pid) is None


def test_boot_id_is_stable_uuid() -> None:
    b = procfs.boot_id()
    assert len(b) == 36 and b.count("-") == 4
    assert procfs.boot_id() == b


def test_kernel_thread_cmdline_shows_comm() -> None:
    assert procfs.proc_cmdline(2) == "[kthreadd]"


def test_cache_keyed_by_pid_and_start_ticks(weird_child: subprocess.Popen[bytes]) -> None:
    cache = procfs.ProcCache()
    info = cache.lookup(weird_child.pid)
    assert info is not None and info.start_ticks == procfs.start_ticks(weird_child.pid)
    assert cache.lookup(weird_child.pid) is info
    weird_child.kill()
    weird_child.wait()
    assert cache.lookup(weird_child.pid) is None
    cache.prune()
    assert len(cache) == 0


@pytest.mark.parametrize(
    ("argv", "secrets", "kept"),
    [
        (["python", "train.py", "--api-key=abc123", "--lr", "0.1"], ["abc123"], ["--lr 0.1"]),
        (["run", "--token", "XYZ789", "--verbose"], ["XYZ789"], ["--token ***", "--verbose"]),
        (["run", "--password", "pw", "--hf-token=hfx"], ["pw ", "hfx"], ["--hf-token=***"]),
        (
            ["env", "AWS_SECRET_ACCESS_KEY=abcd/ef", "python"],
            ["abcd/ef"],
            ["AWS_SECRET_ACCESS_KEY"],
        ),
        (["env", "WANDB_API_KEY=0123abcd", "OPENAI_API_KEY=k1"], ["0123abcd", "k1"], []),
        (["git", "clone", "https://alice:s3cret@example.com/r.git"], ["s3cret"], ["alice"]),
        (["git", "clone", "https://ghp_abcdefghijklmnopqrstuvwxyz01@github.com/a"], ["ghp_"], []),
        (["dl", "https://h/x?token=tk1&page=2"], ["tk1"], ["page=2"]),
        (["dl", "https://s3/x?X-Amz-Signature=dead&a=b"], ["dead"], ["a=b"]),
        (["python", "x.py", "hf_abcdefghijklmnopqrstuvwxyz"], ["hf_abc"], ["x.py"]),
        (["python", "x.py", "sk-proj-abcdefghijklmnopqrstuvwx"], ["sk-proj"], []),
        (["curl", "-H", "Authorization: Bearer sekrit99", "u"], ["sekrit99"], ["Bearer ***"]),
        (["bash", "-c", "python t.py --password hunter2 && ls"], ["hunter2"], ["&& ls"]),
        (["python", "-c", 'login(api_key="k9k9"); d={"secret": "s8s8"}'], ["k9k9", "s8s8"], []),
        (["mysql", "--password=pw0"], ["pw0"], []),
    ],
)
def test_redaction(argv: list[str], secrets: list[str], kept: list[str]) -> None:
    cmd = procfs.redact_cmdline(argv)
    for s in secrets:
        assert s not in cmd, cmd
    assert procfs.REDACTED in cmd
    for k in kept:
        assert k in cmd, cmd


@pytest.mark.parametrize(
    "argv",
    [
        ["python", "train.py", "--max-tokens=100", "--tokenizer", "gpt2", "--lr", "1e-4"],
        ["torchrun", "--nproc_per_node=8", "--master_addr=10.0.0.1", "train.py"],
        ["python", "-m", "http.server", "--bind", "0.0.0.0:8000"],
        ["run", "--token", "--verbose"],
    ],
)
def test_harmless_args_are_kept(argv: list[str]) -> None:
    assert procfs.redact_cmdline(argv) == " ".join(argv)


def test_cmdline_is_cut_to_max_len() -> None:
    cmd = procfs.redact_cmdline(["python", "x" * 5000], max_len=100)
    assert len(cmd) == 100 and cmd.endswith("…")
