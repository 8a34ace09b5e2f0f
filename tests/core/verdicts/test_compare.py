"""``compare``: each cause alone in B is named first, on its GPUs, with the guide's verdict;
noise and a pause are no cause; two causes come in order of share; the store and files give
the same answer; the CLI's specs, JSON and bundle. Streams from ``compare_streams`` (the
protocol's lines, read through the real decoder)."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import pytest
from gpufleet.cli.main import main
from gpufleet.core.history.store import Store
from gpufleet.core.verdicts.compare import compare
from gpufleet.core.verdicts.compare.report import as_json
from gpufleet.core.verdicts.compare.spec import SpecError, StoreSpec, parse_spec
from gpufleet.core.verdicts.window import RunWindow, from_store, from_stream_file
from gpufleet.core.wire.messages import StreamDecoder

from tests.support import compare_streams as cs

DAY = 86_400.0
CASES = [
    ("power_limit", cs.power_limit, (2,), "platform"),
    ("power_cap", cs.power_cap, (1,), "unclear"),
    ("thermal", cs.thermal, (1,), "platform"),
    ("hw_slowdown", cs.hw_slowdown, (3,), "platform"),
    ("clocks_unexplained", cs.clocks_unexplained, (0, 1, 2, 3), "platform"),
    ("shared_gpu", cs.shared_gpu, (2,), "platform"),
    ("data_wait", cs.data_wait, (0, 1, 2, 3), "unclear"),
    ("nvlink", cs.nvlink, (1,), "platform"),
    ("pcie_link", cs.pcie_link, (0,), "platform"),
    ("memory_pressure", cs.memory_pressure, (3,), "unclear"),
    ("ecc", cs.ecc, (2,), "platform"),
]


@pytest.fixture(scope="module")
def ref(tmp_path_factory: pytest.TempPathFactory) -> RunWindow:
    path = tmp_path_factory.mktemp("cmp") / "a.jsonl"
    return from_stream_file(cs.write(path, cs.Run(seed=1)))


def _b(tmp: Path, **kw: object) -> RunWindow:
    run = cs.Run(seed=2, t0=cs.Run().t0 + DAY, **kw)  # type: ignore[arg-type]
    return from_stream_file(cs.write(tmp / "b.jsonl", run))


@pytest.mark.parametrize(("name", "effect", "gpus", "verdict"), CASES, ids=[c[0] for c in CASES])
def test_each_cause_alone_is_named_first(
    ref: RunWindow, tmp_path: Path, name: str, effect: object, gpus: tuple[int, ...], verdict: str
) -> None:
    c = compare(ref, _b(tmp_path, effects=[effect(gpus)]))  # type: ignore[operator]
    assert c.causes, f"{name}: no cause named"
    top = c.causes[0]
    assert top.cause == name
    assert top.gpus == gpus
    assert c.verdict == verdict
    if verdict == "unclear":
        assert c.reason == name
    assert c.slower_by_pct is not None and c.slower_by_pct > 5
    assert top.share_pct <= c.slower_by_pct + 0.5
    # Nothing else is blamed for more than a sliver.
    assert all(x.share_pct < 3 for x in c.causes[1:]), [(x.cause, x.share_pct) for x in c.causes]


def test_noise_only_is_the_job(ref: RunWindow, tmp_path: Path) -> None:
    c = compare(ref, _b(tmp_path))
    assert c.verdict == "job"
    assert all(x.share_pct <= 10 for x in c.causes)
    assert not c.causes
    assert c.slower_by_pct is not None and abs(c.slower_by_pct) < 3
    assert as_json(c)["says"].startswith("Your job")


def test_a_checkpoint_pause_is_not_compared_with_training(ref: RunWindow, tmp_path: Path) -> None:
    # B paused twice more (checkpoints at 5 and 10 minutes): busy time against busy time.
    c = compare(ref, _b(tmp_path, pause_at=(300, 600)))
    assert c.verdict == "job", [(x.cause, x.share_pct) for x in c.causes]
    assert c.b.work_s < c.a.work_s - 150


def test_two_causes_are_named_in_order_of_share(ref: RunWindow, tmp_path: Path) -> None:
    c = compare(ref, _b(tmp_path, effects=[cs.thermal((1,)), cs.shared_gpu((3,))]))
    names = [x.cause for x in c.causes]
    assert names[:2] == ["shared_gpu", "thermal"]
    assert c.causes[0].gpus == (3,) and c.causes[1].gpus == (1,)
    assert c.causes[0].share_pct > c.causes[1].share_pct > 10
    assert c.verdict == "platform"
    # The GPUs waiting for the slowed ones are not blamed on data.
    assert "data_wait" not in names


def test_other_gpu_models_or_no_work_are_unclear(ref: RunWindow, tmp_path: Path) -> None:
    idle = _b(tmp_path, effects=[cs.Effect((0, 1, 2, 3), _stop)])
    c = compare(ref, idle)
    assert (c.verdict, c.reason, c.slower_by_pct) == ("unclear", "no_common_work", None)
    path = cs.write(tmp_path / "other.jsonl", cs.Run(seed=3))
    text = path.read_text().replace(cs.GPU_NAME, "NVIDIA A100-SXM4-80GB", 1)
    path.write_text(text.replace(cs.GPU_NAME, "NVIDIA A100-SXM4-80GB"))
    c = compare(ref, from_stream_file(path))
    assert (c.verdict, c.reason) == ("unclear", "different_gpus")
    assert "A100" in as_json(c)["says"]


def _stop(v: cs.Cube, gpus: list[int], rng: object, busy: object) -> None:
    v[:, :, cs.C["util_gpu_pct"]] = 0


def _record(store: Store, path: Path) -> None:
    dec = StreamDecoder()
    for line in path.read_bytes().splitlines():
        m = dec.feed(line)
        if m is not None:
            store.write("h100-a", m)


def test_the_store_and_files_give_the_same_answer(tmp_path: Path) -> None:
    # Recent windows: the store keeps raw samples for 7 days.
    t0 = float(int(time.time() - 2 * DAY))
    pa = cs.write(tmp_path / "a.jsonl", cs.Run(seed=1, t0=t0, seconds=1500))
    effects = [cs.thermal((1,)), cs.shared_gpu((2,))]
    pb = cs.write(tmp_path / "b.jsonl", cs.Run(seed=2, t0=t0 + DAY, seconds=1500, effects=effects))
    store = Store(tmp_path / "h.sqlite")
    _record(store, pa)
    _record(store, pb)
    store.flush()
    sa = from_store(store, "h100-a", t0, t0 + 1500)
    sb = from_store(store, "h100-a", t0 + DAY, t0 + DAY + 1500)
    store.close()
    from_files = as_json(compare(from_stream_file(pa), from_stream_file(pb)))
    from_history = as_json(compare(sa, sb))
    for key in ("verdict", "slower_by_pct", "slower_by_range_pct", "causes", "hardware"):
        assert from_history[key] == from_files[key], key
    assert [x["cause"] for x in from_files["causes"]][:2] == ["shared_gpu", "thermal"]


def test_window_specs() -> None:
    now = 1_800_000_000.0
    assert parse_spec("h100-a:-1d/2h", now) == StoreSpec("h100-a", now - DAY, now - DAY + 7200)
    spec = parse_spec("h100-a:2026-11-30T10:00Z/90m", now)
    assert isinstance(spec, StoreSpec) and spec.t1 - spec.t0 == 5400
    assert spec.t0 == pytest.approx(1_796_032_800.0)
    assert parse_spec("runs/yesterday.jsonl", now) == Path("runs/yesterday.jsonl")
    for bad, says in (
        ("h100-a", "neither"),
        ("h100-a:-1d/2", "bad duration"),
        ("h:x/1h", "bad time"),
    ):
        with pytest.raises(SpecError, match=says):
            parse_spec(bad, now)


def test_cli_json_and_bundle(
    ref: RunWindow, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pa = cs.write(tmp_path / "a.jsonl", cs.Run(seed=1, seconds=900))
    pb = cs.write(
        tmp_path / "b.jsonl",
        cs.Run(seed=2, seconds=900, t0=cs.Run().t0 + DAY, effects=[cs.power_limit((0,))]),
    )
    zpath = tmp_path / "cmp.zip"
    rc = main(["compare", str(pa), str(pb), "--format", "json", "--bundle", str(zpath)])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["verdict"] == "platform"
    assert set(out["causes"][0]) >= {"cause", "gpus", "share_pct", "a", "b", "says"}
    assert out["causes"][0]["a"]["power_limit_w"] == 700
    assert out["causes"][0]["b"]["power_limit_w"] == 450
    assert "450 W" in out["causes"][0]["says"]
    with zipfile.ZipFile(zpath) as z:
        names = set(z.namelist())
        assert {"a.jsonl", "b.jsonl", "comparison.json", "summary.txt", "per_gpu.csv"} <= names
        assert json.loads(z.read("comparison.json"))["verdict"] == "platform"
        assert z.read("b.jsonl").count(b'"kind":"sample"') == 900
    assert main(["compare", "bogus", str(pb)]) == 2
    assert "neither a stream file" in capsys.readouterr().err
    assert main(["compare", str(pa), str(tmp_path / "missing.jsonl")]) == 8
    assert "no such file" in capsys.readouterr().err
    # A file that is no gpufleet stream fails as it does in `replay` (1), not "not found".
    junk = tmp_path / "notes.jsonl"
    junk.write_text("not json\n", encoding="utf-8")
    assert main(["compare", str(junk), str(pb)]) == 1
    assert "A: " in (err := capsys.readouterr().err) and "not a gpufleet stream" in err
    assert main(["replay", str(junk)]) == 1
    assert "not a gpufleet stream" in capsys.readouterr().err
