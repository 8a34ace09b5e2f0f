"""What a new user trips on, from an empty config and data dir: each command line run as the
real ``gpufleet`` in a subprocess, judged by its exit code (docs/cli.md), its one-line error
(what is wrong and what to do, never a traceback) and what it leaves running.

Each case here was a real stumble of the CLI audit: a value taken that should have been
refused (an empty ``--ssh``, a ``--jump`` of colons, a negative PID, an infinite budget), a
refusal that came late or said the wrong thing, a false "messages lost" on a fresh stream, a
demo sampler daemon left sampling for a day."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gpufleet.cli.commands.screenshot import TAB_HOST
from gpufleet.cli.errors import EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE
from gpufleet.core.config import paths

from tests.support.cli_run import gpufleet


def _one_error_line(err: str) -> str:
    """The error a command ended with: its last stderr line, and no traceback above it."""
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines, "no error printed"
    return lines[-1]


def _samplers_of(data_dir: Path) -> list[str]:
    """Command lines of the sampler processes that sample into ``data_dir``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "gpufleet_sampler" in cmd and str(data_dir) in cmd:
            found.append(cmd)
    return found


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["kill", "demo:h100-a", "-5"], "PID"),
        (["kill", "demo:h100-a", "0"], "PID"),
        (["bench", "demo:h100-a", "--seconds", "abc"], "--seconds"),
        (["bench", "demo:h100-a", "--seconds", "0"], "--seconds"),
        (["bench", "demo:h100-a", "--gpus", "-1"], "--gpus"),
        (["check", "demo:h100-a", "--bench", "--bench-seconds", "99999"], "--bench-seconds"),
        (["replay", "x.jsonl", "--price-per-hour", "-1"], "--price-per-hour"),
        (["diagnose", "demo:h100-a", "--budget", "inf"], "--budget"),
        (["diagnose", "demo:h100-a", "--price-per-hour", "abc"], "--price-per-hour"),
        (["hosts", "add", "box", "--ssh", ""], "--ssh"),
        (["hosts", "add", "box", "--ssh", "   "], "--ssh"),
        (["hosts", "add", "box", "--jump", ":::"], "--jump"),
        (["hosts", "add", "box", "--jump", "a@b:99999"], "--jump"),
        (["screenshot", "--out", "shots", "--tab", "nosuch"], "--tab"),
    ],
)
def test_a_bad_value_is_refused_before_anything_starts(argv: list[str], flag: str) -> None:
    r = gpufleet(*argv)
    line = _one_error_line(r.stderr)
    assert r.returncode == EXIT_USAGE, r.stderr
    assert flag in line, line
    assert not paths.config_file().exists()  # no host was added
    assert not _samplers_of(paths.data_dir())  # no sampler was started


def test_a_jump_host_that_is_an_ipv6_address_or_a_name_is_kept() -> None:
    r = gpufleet("hosts", "add", "box", "--jump", "root@::1,bastion.example.com:2222")
    assert r.returncode == EXIT_OK, r.stderr
    hosts = json.loads(gpufleet("hosts", "list", "--format", "json").stdout)
    assert [h.get("jump") for h in hosts] == ["root@::1,bastion.example.com:2222"]


def test_the_same_gpu_named_twice_is_benchmarked_once() -> None:
    r = gpufleet("bench", "demo:4090-x2", "--gpus", "1,1", "--seconds", "1")
    assert "Traceback" not in r.stderr
    # Each measurement's progress line once (named twice, GPU 1 was measured twice).
    progress = [ln for ln in r.stderr.splitlines() if ln.startswith("GPU 1: BF16 matmul")]
    assert len(progress) == 1, r.stderr
    assert "GPU 0" not in r.stdout, r.stdout
    assert not _samplers_of(paths.data_dir())


def test_an_ssh_config_without_hosts_or_a_directory_is_said_so(tmp_path: Path) -> None:
    empty = tmp_path / "ssh_config"
    empty.write_text("# nothing here yet\n")
    r = gpufleet("hosts", "import-ssh-config", "--all", "--ssh-config", str(empty))
    assert r.returncode == EXIT_NOT_FOUND, r.stderr
    assert "no Host entries" in _one_error_line(r.stderr)
    r = gpufleet("hosts", "import-ssh-config", "--ssh-config", str(tmp_path))
    line = _one_error_line(r.stderr)
    assert r.returncode == EXIT_USAGE, r.stderr
    assert "is not a file" in line and "WARNING" not in r.stderr, r.stderr


def test_a_note_without_a_billing_change_is_refused_not_dropped() -> None:
    assert gpufleet("hosts", "add", "box").returncode == EXIT_OK
    r = gpufleet("hosts", "bill", "box", "--note", "paused by hand")
    assert r.returncode == EXIT_USAGE, r.stderr
    assert "--pause" in _one_error_line(r.stderr)
    # With a change the note is kept.
    assert gpufleet("hosts", "bill", "box", "--pause", "--note", "paused by hand").returncode == 0
    assert "paused by hand" in gpufleet("hosts", "bill", "box").stdout


def test_rules_list_takes_a_demo_host_as_every_command_does() -> None:
    r = gpufleet("rules", "list", "--host", "demo:h100-a", "--format", "json")
    assert r.returncode == EXIT_OK, r.stderr
    assert any(rule["id"] == "thermal_throttle" for rule in json.loads(r.stdout))
    r = gpufleet("rules", "list", "--host", "h100-a")
    assert r.returncode == EXIT_NOT_FOUND
    assert "demo:h100-a" in _one_error_line(r.stderr)


@pytest.mark.parametrize(
    "argv",
    [
        ["diagnose", "demo:h100-a"],
        ["export", "demo:h100-a", "--since=-30m"],
        ["compare", "demo:h100-a:-25m/10m", "demo:h100-a:-13m/10m"],
    ],
)
def test_an_empty_demo_history_says_how_to_fill_it(argv: list[str]) -> None:
    r = gpufleet(*argv)
    line = _one_error_line(r.stderr)
    assert r.returncode == EXIT_NOT_FOUND, r.stderr
    assert "gpufleet --demo" in line and "?;" not in line, line


def test_a_demo_host_with_some_history_but_no_samples_says_how_to_fill_it() -> None:
    # A check records its result (no samples): the demo's store then knows the host.
    assert gpufleet("check", "demo:h100-a").returncode == EXIT_OK
    for argv in (["diagnose", "demo:h100-a"], ["export", "demo:h100-a", "--since=-30m"]):
        r = gpufleet(*argv)
        assert r.returncode == EXIT_NOT_FOUND, r.stderr
        assert "gpufleet --demo" in _one_error_line(r.stderr), r.stderr


def test_a_second_stream_of_a_demo_host_reports_no_lost_messages() -> None:
    """The daemon that the first stream started and stopped numbers on from where it was:
    the second stream had nothing before, so nothing of it is lost."""
    for _ in range(2):
        r = gpufleet("stream", "demo:a100-eval", "--seconds", "3", "--no-record")
        assert r.returncode == EXIT_OK, r.stderr
        assert '"kind":"sample"' in r.stdout
        assert "gap" not in r.stderr and "lost" not in r.stderr, r.stderr
    assert not _samplers_of(paths.data_dir())


def test_watchdog_disarm_stops_the_demo_daemon_that_arming_started() -> None:
    r = gpufleet("watchdog", "demo:a100-eval", "arm", "--action", "shutdown", "--dry-run")
    assert r.returncode == EXIT_OK, r.stderr
    assert "disarm" in r.stderr  # the user is told the daemon runs on, and how to stop it
    assert _samplers_of(paths.data_dir())  # armed: its daemon watches
    r = gpufleet("watchdog", "demo:a100-eval", "disarm")
    assert r.returncode == EXIT_OK, r.stderr
    deadline = time.monotonic() + 30
    while _samplers_of(paths.data_dir()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _samplers_of(paths.data_dir())


def test_usage_errors_name_the_argument_in_capitals() -> None:
    r = gpufleet("watchdog")
    assert "{arm,disarm,status,cancel}" in _one_error_line(r.stderr)
    r = gpufleet("providers", "list")
    assert "PROVIDER" in _one_error_line(r.stderr)


def test_screenshot_tabs_are_the_windows_tabs() -> None:
    from gpufleet.ui.window.main_window import TAB_NAMES

    assert set(TAB_HOST) == set(TAB_NAMES)


def _on_a_terminal(*args: str, columns: int = 80) -> list[str]:
    """``gpufleet ARGS`` with stdout on a pseudo-terminal ``columns`` wide: its lines."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns)}
    with subprocess.Popen(
        [sys.executable, "-m", "gpufleet", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.DEVNULL,
        env=env,
    ) as proc:
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other side closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=120)
    os.close(master)
    return b"".join(chunks).decode().replace("\r\n", "\n").splitlines()


@pytest.mark.parametrize(
    ("argv", "sentence"),
    [
        (["check", "demo:a100-ecc"], "a row remapping is pending: the GPU needs a reset."),
        (["rules", "list"], "the GPU slows itself down because it is hot"),
        (["bench", "demo:4090-x2", "--seconds", "1"], "ask the provider to restore it"),
    ],
)
def test_long_sentences_wrap_at_80_columns_on_a_terminal_and_stay_whole_in_a_pipe(
    argv: list[str], sentence: str
) -> None:
    piped = gpufleet(*argv).stdout.splitlines()
    assert max(len(ln) for ln in piped) > 80  # the sentences are long
    assert any(sentence in ln for ln in piped)  # and whole in a pipe, for grep
    shown = _on_a_terminal(*argv)
    # Only a word longer than the terminal (a path) may overflow, on a line of its own.
    wide = [ln for ln in shown if len(ln) > 80 and " " in ln.strip()]
    assert shown and not wide, wide
    # Nothing lost in the wrapping (the runs differ in PIDs and readings, not in sentences).
    assert sentence in " ".join(" ".join(shown).split())
    assert len(" ".join(shown).split()) == len(" ".join(piped).split())


def test_a_gpu_the_host_does_not_have_is_named_with_the_ones_it_has() -> None:
    r = gpufleet("bench", "demo:4090-x2", "--gpus", "1,5", "--seconds", "1")
    line = _one_error_line(r.stderr)
    assert r.returncode == 1, r.stderr
    assert "no GPU [5] here (GPUs: [0, 1])" in line, line  # not "the worker died"
    assert not _samplers_of(paths.data_dir())
