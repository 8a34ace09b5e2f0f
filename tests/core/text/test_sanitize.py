"""Remote strings (process names and command lines, GPU names, driver versions, event
messages) reach the terminal and text files escaped: kill's confirmation, check's findings,
stream's header, the bundle's summary.txt and CLI errors; JSON stays exact."""

from __future__ import annotations

import io
import json
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from gpufleet.cli.commands import kill, stream
from gpufleet.cli.main import main
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.history.store import Store
from gpufleet.core.model.findings import Finding
from gpufleet.core.text.catalogue import finding_sentence
from gpufleet.core.text.sanitize import clean, clean_text
from gpufleet.core.verdicts.bundle import build_bundle
from gpufleet.core.wire.messages import Event, Hello, Proc, Sample

from tests.support.synth import make_hello

# Clear screen, an OSC 52 clipboard write, a right-to-left override, a zero-width space, a
# carriage return that would overwrite the line, a C1 CSI, a lone surrogate.
EVIL = "x\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\u202egnp.exe\u200b\r\x9b31m\ud800y"
RAW = ("\x1b", "\x07", "\u202e", "\u200b", "\r", "\x9b", "\ud800")
WIRE_EVIL = EVIL.replace("\ud800", "")


def assert_escaped(text: str, surrogate: bool = True) -> None:
    for ch in RAW if surrogate else RAW[:-1]:
        assert ch not in text, (ch, text)
    assert "\\x1b" in text and "\\u202e" in text, text


def test_clean_escapes_every_class_and_keeps_the_rest() -> None:
    out = clean(EVIL)
    assert_escaped(out)
    assert out.startswith("x\\x1b[2J\\x1b]52;c;") and out.endswith("\\ud800y")
    assert clean("a\nb\tc") == "a\\x0ab\\x09c"  # a value cannot forge a line of its own
    assert clean_text("a\nb\tc\x1b") == "a\nb\tc\\x1b"  # a whole text keeps its lines
    plain = "python train.py --lr 1e-4 · 训练 · ünïcode"
    assert clean(plain) == plain and clean_text(plain) == plain
    assert clean(42) == "42"
    out.encode("utf-8")  # printable: the lone surrogate no longer makes the write fail


def test_kill_confirmation_escapes_the_remote_process() -> None:
    host = HostConfig(name="h", transport="local", backend="sim")
    p = Proc(0, 4242, 77, EVIL, EVIL, f"python {EVIL} --epochs 3", 1 << 30, 50.0, "C")
    text = kill.describe(host, [p])
    assert_escaped(text)
    plain = kill.describe(host, [p._replace(user="u", name="n", cmd="python x --epochs 3")])
    assert "--epochs 3" in text and text.count("\n") == plain.count("\n")  # no forged line


def evil_hello(gpus: int) -> Hello:
    """A hello whose GPU names, driver and sampler version carry escapes (the decoder never
    makes a lone surrogate: orjson refuses one, so WIRE_EVIL has none)."""
    hello = make_hello(gpus=gpus)
    raw = dict(hello.raw)
    raw["sampler_version"] = WIRE_EVIL
    raw["host"] = {**raw["host"], "driver_version": WIRE_EVIL}
    raw["gpus"] = [{**g, "name": WIRE_EVIL} for g in raw["gpus"]]
    return replace(
        hello,
        sampler_version=WIRE_EVIL,
        host=raw["host"],
        raw=raw,
        gpus=tuple(replace(g, name=WIRE_EVIL) for g in hello.gpus),
    )


def test_stream_header_escapes_gpu_names_and_versions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    hello = evil_hello(2)
    out = io.BytesIO()
    stream._emit(out, "table", "h", hello)
    assert_escaped(capsys.readouterr().err, surrogate=False)
    # jsonl stays exact: the protocol's own line, the escape characters as JSON escapes.
    stream._emit(out, "jsonl", "h", hello)
    back = json.loads(out.getvalue().splitlines()[-1])
    assert back["sampler_version"] == WIRE_EVIL
    assert back["gpus"][0]["name"] == WIRE_EVIL


def test_finding_sentences_escape_their_values() -> None:
    f = Finding("driver", "pass", None, {"driver_version": EVIL, "cuda_version": "12.4",
                                         "gpu_names": EVIL})  # fmt: skip
    text = finding_sentence(f)
    assert_escaped(text)
    assert "12.4" in text
    unknown = Finding("no_such_finding", "warn", 0, {"name": EVIL})
    assert_escaped(finding_sentence(unknown))


def test_bundle_summary_escapes_remote_strings_json_parts_stay_exact(tmp_path: Path) -> None:
    hello = evil_hello(1)
    t0 = time.time() - 120
    cols = hello.columns
    store = Store(tmp_path / "h.sqlite")
    store.write("h", hello)
    for i in range(60):
        row = (0, *([50.0] * len(cols)))
        store.write("h", Sample(seq=i + 1, t=t0 + i, mono=float(i), columns=cols, rows=(row,)))
    store.write("h", Event(61, t0 + 30, "xid", 0, 79, WIRE_EVIL, {}))
    store.write("h", Event(62, t0 + 31, WIRE_EVIL, 0, None, WIRE_EVIL, {}))
    store.flush()
    assert store.errors == 0, store.last_error
    out = tmp_path / "b.zip"
    build_bundle(store, "h", t0 - 10, t0 + 100, out)
    store.close()
    with zipfile.ZipFile(out) as z:
        summary = z.read("summary.txt").decode("utf-8")
        events = orjson.loads(z.read("events.json"))
        inventory = orjson.loads(z.read("inventory.json"))
    assert_escaped(summary, surrogate=False)
    assert summary.count("\\x1b[2J") >= 4, summary  # GPU name, driver, two event messages
    assert [e["message"] for e in events] == [WIRE_EVIL, WIRE_EVIL]
    assert inventory["gpus"][0]["name"] == WIRE_EVIL


def test_cli_errors_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # An error that quotes outside text (here a file name) goes through main's handler.
    path = tmp_path / WIRE_EVIL
    assert main(["replay", str(path)]) != 0
    assert_escaped(capsys.readouterr().err, surrogate=False)
