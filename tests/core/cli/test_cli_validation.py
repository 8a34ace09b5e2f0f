"""Every flag checked when the command line is parsed (exit 2, the flag named, nothing
started), the exit codes docs/cli.md gives for a bad rules file and an unknown host, and a
refused connection that fails at once instead of waiting out the timeout."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from gpufleet.cli.errors import EXIT_CONNECT, EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE
from gpufleet.cli.main import main
from gpufleet.core.config import paths
from gpufleet.core.config.configfile import AppConfig, save_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link import hostkeys
from gpufleet_sampler import protocol
from gpufleet_sampler.sim.scenarios import SCENARIOS

from tests.support.paths import ROOT


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    try:
        rc = main(list(argv))
    except SystemExit as e:  # argparse's own usage errors
        rc = int(e.code or 0)
    return rc, capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["kill", "h", "123", "--grace", "-3"], "--grace"),
        (["kill", "h", "123", "--grace", "nan"], "--grace"),
        (["stream", "h", "--seconds", "-1"], "--seconds"),
        (["stream", "h", "--seconds", "0"], "--seconds"),
        (["screenshot", "--minutes", "-5"], "--minutes"),
        (["hosts", "add", "x", "--backend", "sim", "--scenario", "nosuch"], "--scenario"),
        (["hosts", "add", "x", "--price-per-hour", "-1"], "--price-per-hour"),
    ],
)
def test_bad_flag_values_are_usage_errors_at_parse_time(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    rc, err = run(capsys, *argv)
    assert rc == EXIT_USAGE, err
    assert flag in err, err
    assert "Traceback" not in err
    assert not paths.config_file().exists()  # nothing was added or started


def test_the_scenario_names_the_laptop_knows_are_the_simulators() -> None:
    assert set(protocol.SIM_SCENARIOS) == set(SCENARIOS)


def test_a_missing_key_file_given_with_dash_i_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "nokey"
    rc, err = run(capsys, "hosts", "add", "x", "--ssh", f"ssh -p 2222 -i {missing} root@h")
    assert rc == EXIT_USAGE and "key file" in err and str(missing) in err, err
    assert not paths.config_file().exists()
    key = tmp_path / "key"
    key.write_text("not checked here, only that it exists\n")
    rc, err = run(capsys, "hosts", "add", "x", "--ssh", f"ssh -p 2222 -i {key} root@h")
    assert rc == EXIT_OK, err


def test_rules_list_for_an_unknown_host_is_not_found(capsys: pytest.CaptureFixture[str]) -> None:
    save_config(AppConfig(hosts=[HostConfig(name="known", host="10.0.0.1")]))
    rc, err = run(capsys, "rules", "list", "--host", "nosuch")
    assert rc == EXIT_NOT_FOUND and "nosuch" in err, err
    rc, _ = run(capsys, "rules", "list", "--host", "known")
    assert rc == EXIT_OK


def test_a_broken_rules_file_exits_1_as_documented(capsys: pytest.CaptureFixture[str]) -> None:
    paths.rules_file().parent.mkdir(parents=True, exist_ok=True)
    paths.rules_file().write_text("[[rule]\nthis is = not toml\n")
    rc, err = run(capsys, "rules", "list")
    assert rc == EXIT_FAILURE, err
    assert "Traceback" not in err
    docs = (ROOT / "docs" / "cli.md").read_text()
    assert "| 1 | failure: a health check failed, a bad config or rules file" in docs


def test_kill_to_a_refused_port_fails_fast(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    host = HostConfig(name="gone", host="127.0.0.1", port=port, auth="agent")
    save_config(AppConfig(hosts=[host]))
    hostkeys.app_known_hosts().parent.mkdir(parents=True, exist_ok=True)
    rc, err = run(capsys, "kill", "gone", "4242", "--yes")
    assert rc == EXIT_CONNECT, err
    # Failed on the refusal itself, not after waiting out the process list (30 s): the
    # error names the refused connection and no timeout (how long that took is this
    # machine's business).
    assert "refused" in err, err
    assert "timed out" not in err and "timeout" not in err, err


def test_a_time_ago_with_a_minus_is_the_options_value(capsys: pytest.CaptureFixture[str]) -> None:
    # `--since -2h` as users type it (argparse alone says "expected one argument"): the
    # time is read, and the command goes on to say there is no history yet.
    rc, err = run(capsys, "export", "demo:h100-a", "--since", "-2h", "--out", "x")
    assert rc == EXIT_NOT_FOUND and "no history" in err, err
    rc, err = run(capsys, "export", "demo:h100-a", "--around", "-1h", "--out", "x")
    assert rc == EXIT_NOT_FOUND and "no history" in err, err
    # A duration takes no minus: the command's own message, not argparse's.
    rc, err = run(capsys, "diagnose", "demo:h100-a", "--window", "-5m")
    assert rc == EXIT_USAGE and "bad duration '-5m'" in err, err
