"""`gpufleet hosts import --provider …`, `hosts bill` and `providers list` through the real
CLI entry point, against a local server speaking each provider's API."""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Iterator

import pytest
from gpufleet.cli.main import main
from gpufleet.core.config import configfile
from gpufleet.core.cost.billing import BillingLedger
from gpufleet.core.providers import credentials

from tests.support.provider_payloads import LAMBDA_INSTANCES, RUNPOD_PODS, VAST_INSTANCES
from tests.support.provider_server import ProviderServer, Reply, serve

KEY = "test-key-not-real-42"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderServer]:
    for var in ("VAST_API_KEY", "RUNPOD_API_KEY", "LAMBDA_API_KEY"):
        monkeypatch.setenv(var, KEY)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no terminal: never prompts
    yield from serve()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_import_vast_shows_first_then_adds_with_yes(server, capsys):
    server.route("GET", "/api/v1/instances/", Reply(200, VAST_INSTANCES))
    rc, out, _ = run(capsys, "hosts", "import", "--provider", "vast", "--api-url", server.url)
    assert rc == 2 and "run again with --yes" in out
    assert "add     train-a: ssh -p 31922 root@ssh5.vast.ai, 2x RTX 4090, 0.412 USD/h" in out
    assert configfile.load_config().hosts == []  # nothing written without --yes

    rc, out, _ = run(
        capsys, "hosts", "import", "--provider", "vast", "--api-url", server.url, "--yes"
    )
    assert rc == 0, out
    hosts = {h.name: h for h in configfile.load_config().hosts}
    a, b = hosts["train-a"], hosts["vast-4242002"]
    assert (a.host, a.port, a.user) == ("ssh5.vast.ai", 31922, "root")
    assert (a.price_per_hour, a.currency, a.provider, a.provider_id) == (
        0.412,
        "USD",
        "vast",
        "4242001",
    )
    assert b.storage_per_hour == pytest.approx(0.1 * 100 / 720)
    ledger = BillingLedger.load()
    assert ledger.state("train-a") == "running" and ledger.state("vast-4242002") == "storage"
    text = configfile.config_file_path().read_text()
    assert KEY not in text

    # The price changed at the provider: an update, names and other hosts untouched.
    doc = copy.deepcopy(VAST_INSTANCES)
    doc["instances"][0]["dph_total"] = 0.5
    server.route("GET", "/api/v1/instances/", Reply(200, doc))
    rc, out, _ = run(
        capsys, "hosts", "import", "--provider", "vast", "--api-url", server.url, "--yes"
    )
    assert "update  train-a: price_per_hour 0.412 -> 0.5" in out
    assert "same    vast-4242002" in out
    assert configfile.load_config().host("train-a").price_per_hour == 0.5


def test_import_runpod_and_lambda(server, capsys):
    server.route("GET", "/v2/pods", Reply(200, RUNPOD_PODS))
    server.route("GET", "/api/v1/instances", Reply(200, LAMBDA_INSTANCES))
    for prov in ("runpod", "lambda"):
        rc, out, _ = run(
            capsys, "hosts", "import", "--provider", prov, "--api-url", server.url, "--yes"
        )
        assert rc == 0, out
    hosts = {h.name: h for h in configfile.load_config().hosts}
    pod = hosts["llm-ft"]
    assert (pod.host, pod.port, pod.user, pod.price_per_hour) == (
        "100.65.0.119",
        22917,
        "root",
        0.74,
    )
    assert "stopped-one" not in hosts  # no SSH endpoint while stopped
    lam = hosts["h100-box"]
    assert (lam.host, lam.port, lam.user, lam.price_per_hour, lam.provider) == (
        "198.51.100.2",
        22,
        "ubuntu",
        2.49,
        "lambda",
    )
    for call in server.seen:
        assert call.headers["authorization"] == f"Bearer {KEY}"


def test_import_errors_are_one_line(server, capsys, monkeypatch):
    server.route("GET", "/v2/pods", Reply(401, {"error": "invalid api key"}))
    rc, _, err = run(capsys, "hosts", "import", "--provider", "runpod", "--api-url", server.url)
    assert rc == 1
    assert err.strip().count("\n") == 0 and "API key was refused (HTTP 401" in err
    assert "RUNPOD_API_KEY" in err and KEY not in err


def test_import_without_a_key(server, capsys, monkeypatch, secret_service):
    monkeypatch.delenv("VAST_API_KEY")
    rc, _, err = run(capsys, "hosts", "import", "--provider", "vast", "--api-url", server.url)
    assert rc == 2 and "no vast API key" in err


def test_bill_pause_resume_end_persisted(capsys):
    assert run(capsys, "hosts", "add", "box", "--ssh", "ssh -p 2222 root@h")[0] == 0
    rc, out, _ = run(capsys, "hosts", "bill", "box")
    assert rc == 0 and "box: running" in out
    rc, out, _ = run(capsys, "hosts", "bill", "box", "--pause", "--note", "stopped in console")
    assert "stopped, paying for storage only" in out and "no storage_per_hour" in out
    assert BillingLedger.load().state("box") == "storage"
    run(capsys, "hosts", "bill", "box", "--resume")
    run(capsys, "hosts", "bill", "box", "--end")
    ledger = BillingLedger.load()
    assert [c.state for c in ledger.history("box")] == ["storage", "running", "ended"]
    assert ledger.history("box")[0].note == "stopped in console"
    rc, out, _ = run(capsys, "hosts", "bill", "box")
    assert "ended" in out and "stopped in console" in out
    rc, _, err = run(capsys, "hosts", "bill", "nosuch", "--pause")
    assert rc == 8 and "no host named 'nosuch'" in err


def test_providers_list_json(server, capsys):
    server.route("GET", "/v2/pods", Reply(200, RUNPOD_PODS))
    rc, out, _ = run(
        capsys, "providers", "list", "runpod", "--api-url", server.url, "--format", "json"
    )
    assert rc == 0
    doc = json.loads(out)
    assert doc[0]["ssh_command"] == "ssh -p 22917 root@100.65.0.119"
    assert doc[1]["billing"] == "storage"
    assert KEY not in out


def test_providers_login_stores_in_keyring(capsys, monkeypatch, secret_service):
    monkeypatch.setattr("sys.stdin", io.StringIO("vast-key-from-stdin\n"))
    rc, out, _ = run(capsys, "providers", "login", "vast")
    assert rc == 0 and "stored the vast API key in the OS keyring" in out
    assert "vast-key-from-stdin" not in out
    monkeypatch.delenv("VAST_API_KEY", raising=False)
    assert credentials.find_key("vast").source == "keyring"
    assert run(capsys, "providers", "logout", "vast")[1].startswith("deleted")


def test_bill_sync_takes_the_providers_state(server, capsys):
    server.route("GET", "/v2/pods", Reply(200, RUNPOD_PODS))
    run(capsys, "hosts", "import", "--provider", "runpod", "--api-url", server.url, "--yes")
    stopped = dict(RUNPOD_PODS[0], status="EXITED")
    server.route("GET", "/v2/pods/xedezhzb9la3ye", Reply(200, stopped))
    rc, out, _ = run(capsys, "hosts", "bill", "llm-ft", "--sync", "--api-url", server.url)
    assert rc == 0 and "llm-ft: EXITED at runpod" in out
    ledger = BillingLedger.load()
    assert ledger.state("llm-ft") == "storage"
    assert ledger.history("llm-ft")[-1].source == "provider"
    # Gone: 404 on the pod's own path, and the account no longer lists it.
    server.route("GET", "/v2/pods/xedezhzb9la3ye", Reply(404, {"error": "pod not found"}))
    server.route("GET", "/v2/pods", Reply(200, RUNPOD_PODS[1:]))
    rc, out, _ = run(capsys, "hosts", "bill", "llm-ft", "--sync", "--api-url", server.url)
    assert rc == 0 and "llm-ft: ended" in out
    assert BillingLedger.load().state("llm-ft") == "ended"
