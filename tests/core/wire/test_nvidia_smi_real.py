"""Every real nvidia-smi output under ``../shared/real/nvidia-smi/`` (xml: ``-q -x`` dumps of
drivers 418 to 595; captures: ``--help-query-gpu`` lists, full ``--query-gpu`` CSV rows,
compute-apps rows and ``-L`` of drivers 465 to 610, H100/H200 with MIG; csv: a real P100
stream) through the laptop's real nvidia-smi parsing path, with no exception, and with the
values a person reads in the capture itself, written out here per file (never computed by the
parser under test). The captures stay in ``../shared/real``: a clone without it skips."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpufleet.core.verdicts.health import evaluate_check
from gpufleet.core.wire import nvidia_smi as smi
from gpufleet.core.wire.messages import Hello, parse_object
from gpufleet_sampler import protocol

from tests.support import paths

REAL = paths.REAL / "nvidia-smi"
MIB = 1 << 20
pytestmark = pytest.mark.skipif(
    not REAL.is_dir(), reason=f"the real nvidia-smi captures are not here ({REAL})"
)


def _files(sub: str, pattern: str) -> list[Path]:
    return sorted((REAL / sub).glob(pattern)) if REAL.is_dir() else []


def _xml(name: str) -> bytes:
    return (REAL / "xml" / name).read_bytes()


def sections(text: str) -> Iterator[tuple[str, str]]:
    """(title, body) of each section of a capture: "#####" banners around "# title" and
    "# $ command" in the newer captures; a "# nvidia-smi …" line in the older ones."""
    if re.search(r"^#{20,}$", text, re.M):
        parts = re.split(r"^#{20,}\n", text, flags=re.M)
        for head, body in zip(parts[1::2], parts[2::2], strict=False):
            yield head.strip().splitlines()[0].lstrip("# "), body
        return
    for block in re.split(r"^(?=# nvidia-smi)", text, flags=re.M):
        if block.startswith("# nvidia-smi"):
            head, _, body = block.partition("\n")
            yield head.lstrip("# "), body


def _query_tables(text: str) -> list[str]:
    out = []
    for title, body in sections(text):
        if "query-gpu" in title and "help" not in title and "field list" not in title:
            start = body.find("timestamp, ")
            if start >= 0:
                out.append(body[start:])
    return out


def _section(text: str, marker: str) -> str:
    for title, body in sections(text):
        if marker in title:
            return body
    raise AssertionError(f"no section {marker!r}")


def _plan_for(help_text: str) -> smi.FieldPlan:
    """The field plan the probe ends with on that driver: each field it does not list is
    refused, as that nvidia-smi refuses it ('Field "x" is not a valid field to query')."""
    known = smi.help_fields(help_text)
    plan = smi.FieldPlan.initial()
    while True:
        bad = [f for f in plan.fields() if f not in known]
        if not bad:
            return plan
        assert plan.refuse(bad[0]), bad[0]


# -- every file, no exception ------------------------------------------------------------------


@pytest.mark.parametrize("path", _files("xml", "*.xml"), ids=lambda p: p.name)
def test_every_xml_dump_parses_into_hello_and_check(path: Path) -> None:
    raw = path.read_bytes()
    inv = smi.parse_inventory(raw)
    obj = smi.hello_obj(inv, smi.FieldPlan.initial(), {}, "run", 1.0, "host")
    hello = parse_object(obj)
    assert isinstance(hello, Hello) and len(hello.gpus) == len(inv.gpus) + len(inv.slices())
    facts = smi.check_facts(raw)
    findings = evaluate_check(facts)
    assert {f.gpu for f in findings if f.gpu is not None} == {g.index for g in inv.gpus}
    for g, card in zip(facts["gpus"], inv.gpus, strict=True):
        # Null, never 0, for what a dump does not report (a vGPU guest prints 0 C, 0 MHz).
        assert g["temp_gpu_c"] is None or g["temp_gpu_c"] > 0, path.name
        assert card.nominal["sm_clock_max_mhz"] is None or card.nominal["sm_clock_max_mhz"] > 0


@pytest.mark.parametrize(
    "path",
    _files("captures", "*.txt") + _files("csv", "*.csv") + _files("csv", "*.txt"),
    ids=lambda p: p.name,
)
def test_every_capture_and_csv_goes_through_the_parser(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    tables = _query_tables(text) if path.suffix == ".txt" else [text]
    if "List of valid properties" in text:
        plan = _plan_for(text)
        assert {"util_gpu_pct", "power_w", "mem_used_bytes", "temp_gpu_c"} <= set(plan.columns())
    for table in tables:
        if "," not in table.splitlines()[0]:
            continue  # a field list, not a table
        rows = smi.parse_query_table(table)
        assert rows and all(isinstance(r.values, dict) for r in rows)
        for r in rows:
            row = smi.sample_row(r)
            assert len(row) == len(protocol.COLUMNS) + 1


# -- per-file facts, as read in the captures ---------------------------------------------------

# file: (name, driver, cuda, memory total MiB, enforced W, default W, slowdown C, shutdown C,
#        max SM MHz, max memory MHz, PCIe max gen, max width, current gen, current width)
XML_FACTS = {
    "netdata__a100-sxm4-mig.xml": (
        "NVIDIA A100-SXM4-40GB", "510.47.03", "11.6", 40960, 400, 400, 89, 92,
        1410, 1215, 4, 16, 4, 16,
    ),
    "telegraf__a100-sxm4-v12.xml": (
        "NVIDIA A100-SXM4-80GB", "535.54.03", "12.2", 81920, 500, 500, 89, 92,
        1410, 1593, 4, 16, 4, 16,
    ),
    "netdata__tesla-p100.xml": (
        "Tesla P100-PCIE-16GB", "510.47.03", "11.6", 16384, 250, 250, 82, 85,
        1328, 715, 3, 16, 3, 16,
    ),
    "netdata__rtx-2080-win.xml": (
        "NVIDIA GeForce RTX 2080", "516.59", "11.7", 8192, 275, 275, 97, 100,
        3060, 7560, 3, 16, 3, 8,
    ),
    # 535 prints <gpu_power_readings> with current_power_limit and T.Limit margins only:
    # 40 C with 43 C to T.Limit (83 C), slowdown at -2 C of margin, shutdown at -7 C.
    "netdata__rtx-4090-driver-535.xml": (
        "NVIDIA GeForce RTX 4090", "535.86.05", "12.2", 24564, 450, 450, 85, 90,
        None, None, None, None, None, None,
    ),
    "telegraf-pr17482__dual_a5000-v13.xml": (
        "NVIDIA RTX A5000", "590.44.01", "13.1", 24564, 230, 230, 95, 98,
        2100, 8001, 4, 16, 1, 16,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(XML_FACTS))
def test_xml_values_are_the_dumps(name: str) -> None:
    (gpu, driver, cuda, mem, enforced, default, slow, shut, sm_max, mem_max, *pcie) = XML_FACTS[
        name
    ]
    raw = _xml(name)
    inv = smi.parse_inventory(raw)
    g = inv.gpus[0]
    n = g.nominal
    assert (g.name, inv.driver_version, inv.cuda_version) == (gpu, driver, cuda)
    assert n["mem_total_bytes"] == mem * MIB
    assert (n["power_enforced_w"], n["power_default_w"]) == (enforced, default)
    assert (n["temp_slowdown_c"], n["temp_shutdown_c"]) == (slow, shut)
    if sm_max is not None:
        assert (n["sm_clock_max_mhz"], n["mem_clock_max_mhz"]) == (sm_max, mem_max)
    if pcie[0] is not None:
        facts = smi.check_facts(raw)["gpus"][0]
        got = (n["pcie_max_gen"], n["pcie_max_width"], facts["pcie_gen"], facts["pcie_width"])
        assert got == tuple(pcie)


def test_the_535_4090_dump_names_its_limits() -> None:
    raw = _xml("netdata__rtx-4090-driver-535.xml")
    n = smi.parse_inventory(raw).gpus[0].nominal
    assert (n["power_min_w"], n["power_max_w"]) == (10, 600)
    facts = smi.check_facts(raw)["gpus"][0]
    assert facts["temp_gpu_c"] == 40 and facts["temp_mem_c"] is None  # "N/A"
    assert facts["ecc_mode"] == 0 and facts["ecc_dbe_vol"] is None  # ECC disabled


def test_two_gpus_of_one_dump_keep_their_own_values() -> None:
    inv = smi.parse_inventory(_xml("telegraf-pr17482__dual_a5000-v13.xml"))
    assert [g.pci_bus_id for g in inv.gpus] == ["00000000:81:00.0", "00000000:C1:00.0"]
    facts = smi.check_facts(_xml("telegraf-pr17482__dual_a5000-v13.xml"))["gpus"]
    assert [f["mem_used_bytes"] for f in facts] == [22437 * MIB, 17253 * MIB]
    assert [f["temp_gpu_c"] for f in facts] == [13, 15]


def test_an_abridged_dump_without_driver_version_still_parses() -> None:
    inv = smi.parse_inventory(_xml("telegraf__gtx-1070-ti.xml"))
    assert inv.driver_version is None and inv.gpus[0].name == "GeForce GTX 1070 Ti"
    assert inv.gpus[0].nominal["mem_total_bytes"] == 4096 * MIB


# -- MIG slices --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "slices"),
    [
        # (slot, GPU instance, compute instance, SMs, memory MiB, used MiB)
        ("netdata__a100-sxm4-mig.xml", [(0, 1, 0, 42, 19968, 19), (1, 2, 0, 42, 19968, 19)]),
        (
            "telegraf__a100-sxm4-v12.xml",
            [(0, 3, 0, 14, 19968, 12), (1, 4, 0, 14, 19968, 12), (2, 5, 0, 14, 19968, 12),
             (3, 6, 0, 14, 19968, 12)],
        ),
    ],
)  # fmt: skip
def test_mig_slices_are_listed_under_their_card_with_memory_and_sms(
    name: str, slices: list[tuple[int, int, int, int, int, int]]
) -> None:
    inv = smi.parse_inventory(_xml(name))
    got = [
        (s.slot, s.gpu_instance_id, s.compute_instance_id, s.sm_count, s.mem_total_bytes,
         s.mem_used_bytes)
        for s in inv.slices()
    ]  # fmt: skip
    assert got == [(a, b, c, d, e * MIB, f * MIB) for a, b, c, d, e, f in slices]
    hello = parse_object(smi.hello_obj(inv, smi.FieldPlan.initial(), {}, "r", 1.0, "h"))
    assert isinstance(hello, Hello)
    assert [g.index for g in hello.gpus] == [0] + [100 + s[0] for s in slices]
    for info, want in zip(hello.gpus[1:], slices, strict=True):
        mig = info.extra[protocol.MIG_KEY]
        assert mig["parent"] == 0 and mig["sm_count"] == want[3]
        assert info.nominal_value("mem_total_bytes") == want[4] * MIB
        assert "mem_used_bytes" not in info.unsupported and "power_w" in info.unsupported
    assert hello.gpus[0].extra["mig_mode"] == 1


@pytest.mark.parametrize(
    ("name", "profiles"),
    [
        ("utkuozdemir__linux-x86_64__nvidia-h100-mig__590.48.01.txt",
         ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]),
        ("utkuozdemir__linux-x86_64__nvidia-h200-mig__590.48.01.txt",
         ["1c.3g.71gb", "2c.3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"]),
    ],
)  # fmt: skip
def test_mig_capture_names_its_slices_and_has_no_utilization(
    name: str, profiles: list[str]
) -> None:
    text = (REAL / "captures" / name).read_text()
    listing = smi.list_gpus(_section(text, "list (-L)"))
    assert [p for p, _ in listing[0]] == profiles
    assert [u for _, u in listing[0]] == [
        f"MIG-0000000{k}-0000-0000-0000-00000000000{k}" for k in range(len(profiles))
    ]
    # The card's --query-gpu row in MIG mode: utilization "[N/A]", the rest the card's.
    for table in _query_tables(text):
        (row,) = smi.parse_query_table(table)
        assert row.values["util_gpu_pct"] is None and row.values["util_mem_pct"] is None
        assert row.values["power_limit_w"] == 700 and row.values["pstate"] == 0
    inv = smi.Inventory("590.48.01", "13.1", (_card(0),))
    plan = smi.FieldPlan.initial()
    obj = smi.hello_obj(inv, plan, {0: row}, "r", 1.0, "h")
    assert obj["gpus"][0]["unsupported"]["util_gpu_pct"] == smi.MIG_UTIL


def _card(index: int) -> smi.SmiGpu:
    return smi.SmiGpu(index, f"GPU-{index}", "NVIDIA H100 80GB HBM3", "", {}, {"mig_mode": 1})


def test_h100_mig_load_row_values() -> None:
    text = (
        REAL / "captures" / "utkuozdemir__linux-x86_64__nvidia-h100-mig__590.48.01.txt"
    ).read_text()
    idle, load = (smi.parse_query_table(t)[0] for t in _query_tables(text))
    v = load.values
    assert (v["power_w"], v["temp_gpu_c"], v["temp_mem_c"]) == (433.78, 53, 59)
    assert (v["sm_clock_mhz"], v["mem_clock_mhz"]) == (1980, 2619)
    assert v["mem_used_bytes"] == 11125 * MIB and v["fan_pct"] is None
    assert (v["pcie_gen"], v["pcie_width"], v["ecc_dbe_vol"]) == (5, 16, 0)
    assert v["clock_reasons"] == 0 and idle.values["clock_reasons"] == 0x1


# -- SRAM ECC, every layout: 5 uncorrectable errors fail the health check ---------------------


def _ecc(xml: bytes) -> tuple[str, float | None]:
    (f,) = [f for f in evaluate_check(smi.check_facts(xml)) if f.id == "ecc" and f.gpu == 0]
    return f.verdict, f.values.get("ecc_dbe_vol")


def _flip(src: str, tmp_path: Path, pattern: str, repl: str) -> bytes:
    """A copy of the dump (in tmp_path, made now) with one value changed."""
    text = (REAL / "xml" / src).read_text()
    changed, n = re.subn(pattern, repl, text, count=1, flags=re.S)
    assert n == 1, pattern
    out = tmp_path / src
    out.write_text(changed)
    return out.read_bytes()


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        # Drivers 510-535 name it <sram_uncorrectable> under <ecc_errors><volatile>.
        (
            "telegraf__a100-sxm4-v12.xml",
            r"(<ecc_errors>\s*<volatile>.*?<sram_uncorrectable>)0(</sram_uncorrectable>)",
        ),
        # In MIG mode the card's volatile counts say N/A; each slice has its own SRAM count.
        (
            "netdata__a100-sxm4-mig.xml",
            r"(<index>1</index>.*?<volatile_count>\s*<sram_uncorrectable>)0(<)",
        ),
    ],
    ids=["a100-535", "a100-mig-slice"],
)
def test_a100_sram_uncorrectable_fails_the_check(tmp_path: Path, name: str, pattern: str) -> None:
    assert _ecc(_xml(name)) == ("pass", 0)
    assert _ecc(_flip(name, tmp_path, pattern, r"\g<1>5\g<2>")) == ("fail", 5)


def test_570_parity_and_secded_layout_fails_the_check(tmp_path: Path) -> None:
    name = "telegraf-pr17482__dual_a5000-v13.xml"
    text = (REAL / "xml" / name).read_text()
    # The dump has ECC off and every count N/A: turn it on, then put 5 in the SEC-DED count
    # (570+ split SRAM uncorrectable into parity and SEC-DED).
    text = text.replace("<current_ecc>Disabled</current_ecc>", "<current_ecc>Enabled</current_ecc>")
    (tmp_path / "on.xml").write_text(text)
    assert _ecc((tmp_path / "on.xml").read_bytes()) == ("pass", 0)
    flipped, n = re.subn(
        r"(<volatile>.*?<sram_uncorrectable_secded>)N/A(<)",
        r"\g<1>5\g<2>",
        text,
        count=1,
        flags=re.S,
    )
    assert n == 1
    (tmp_path / "flip.xml").write_text(flipped)
    assert _ecc((tmp_path / "flip.xml").read_bytes()) == ("fail", 5)


def test_pascal_double_bit_layout_fails_and_aggregate_only_warns(tmp_path: Path) -> None:
    name = "netdata__tesla-p100.xml"
    # The P100 has 3 single-bit errors in its lifetime count (a warning), none since boot.
    (finding,) = [
        f for f in evaluate_check(smi.check_facts(_xml(name))) if f.id == "ecc" and f.gpu == 0
    ]
    assert finding.verdict == "warn" and finding.values["ecc_sbe_agg"] == 3
    vol = _flip(name, tmp_path, r"(<volatile>.*?<double_bit>.*?<total>)0(<)", r"\g<1>5\g<2>")
    assert _ecc(vol) == ("fail", 5)
    # Uncorrectable errors only in the lifetime count: a warning, not a failure.
    agg = _flip(
        "telegraf__a100-sxm4-v12.xml",
        tmp_path,
        r"(<aggregate>.*?<sram_uncorrectable>)0(<)",
        r"\g<1>5\g<2>",
    )
    assert _ecc(agg) == ("warn", 0)


# -- a GRID vGPU guest's zeros, Windows process names ------------------------------------------


def test_vgpu_guest_zeros_are_not_reported() -> None:
    raw = _xml("telegraf-hist__tesla_p4.xml")
    inv = smi.parse_inventory(raw)
    g = inv.gpus[0]
    assert (g.name, inv.driver_version) == ("GRID P4-1Q", "513.46")
    assert g.vgpu_guest and g.nominal["mem_total_bytes"] == 1024 * MIB
    # The dump prints "0 MHz" for every max clock and "0 C" for the temperature.
    assert g.nominal["sm_clock_max_mhz"] is None and g.nominal["mem_clock_max_mhz"] is None
    assert g.nominal["power_enforced_w"] is None  # "N/A"
    facts = smi.check_facts(raw)["gpus"][0]
    assert facts["temp_gpu_c"] is None and facts["sm_clock_mhz"] is None
    assert facts["virtualization_mode"] == "vgpu"
    # The stream of that guest: its zeros are null with a reason; another GPU's 0 stays 0.
    cols = ["temp_gpu_c", "sm_clock_mhz", "fan_pct", "util_gpu_pct"]
    asm = smi.QueryAssembler(cols, [0, 1], smi.vgpu_guests(inv))
    asm.feed("0, 0, 0, [N/A], 0")
    (tick,) = asm.feed("1, 0, 0, 0, 0")
    assert tick[0].values == {"temp_gpu_c": None, "sm_clock_mhz": None, "fan_pct": None,
                              "util_gpu_pct": 0}  # fmt: skip
    assert tick[0].missing["temp_gpu_c"] == smi.VGPU_ZERO
    assert tick[1].values == dict.fromkeys(cols, 0)


def test_windows_process_names_are_kept_whole() -> None:
    procs = smi.check_facts(_xml("netdata__rtx-2080-win.xml"))["gpus"][0]["process_list"]
    by_pid = {p["pid"]: p for p in procs}
    assert by_pid[21472]["cmd"] == r"C:\Program Files (x86)\Google\Chrome\Application\chrome.exe"
    assert by_pid[21472]["name"] == "chrome.exe"
    assert by_pid[21036]["name"] == "CefSharp.BrowserSubprocess.exe"
    assert by_pid[10808]["cmd"] is None and by_pid[10808]["name"] is None  # empty name
    text = (
        REAL / "captures" / "utkuozdemir__windows-x86_64__nvidia-geforce-rtx-2080-super__610.62.txt"
    ).read_text()
    body = _section(text, "load :: query-compute-apps")
    lines = [ln for ln in body.splitlines() if ln.strip()]
    fields = [c.split(" [", 1)[0] for c in smi.split_csv(lines[0])]
    uuid = "GPU-00000000-0000-0000-0000-000000000000"
    apps = {p["pid"]: p for p in smi.apps_procs(lines[1:], {uuid: 0}, fields)}
    overlay = apps[17648]
    assert (
        overlay["cmd"] == r"C:\Program Files\NVIDIA Corporation\NVIDIA App\CEF\NVIDIA Overlay.exe"
    )
    assert overlay["name"] == "NVIDIA Overlay.exe" and overlay["mem_bytes"] is None  # WDDM
    assert apps[2164]["name"] == "ApplicationFrameHost.exe"


# -- CSV streams and field lists ---------------------------------------------------------------


def test_p100_csv_stream_values() -> None:
    (row,) = smi.parse_query_table((REAL / "csv" / "netdata__tesla-p100.csv").read_text())
    v = row.values
    assert row.index == 0 and v["fan_pct"] is None  # "[N/A]"
    assert (v["pstate"], v["util_gpu_pct"], v["mem_used_bytes"]) == (0, 0, 0)  # real zeros
    assert (v["temp_gpu_c"], v["power_w"]) == (37, 28.16)
    assert (v["gfx_clock_mhz"], v["sm_clock_mhz"], v["mem_clock_mhz"]) == (405, 405, 715)


def test_windows_471_csv_row_values() -> None:
    text = (REAL / "csv" / "utkuozdemir-old__sample-output_win_471.11.csv").read_text()
    (row,) = smi.parse_query_table(text)
    v = row.values
    assert (v["util_gpu_pct"], v["sm_clock_mhz"], v["temp_gpu_c"]) == (2, 111, 36)
    assert (v["power_w"], v["power_limit_w"], v["pstate"]) == (32.7, 250, 8)
    assert (v["mem_used_bytes"], v["fan_pct"], v["clock_reasons"]) == (876 * MIB, 38, 0x1)
    assert (v["pcie_gen"], v["pcie_width"]) == (3, 16)


@pytest.mark.parametrize(
    ("path", "older"),
    [
        ("captures/utkuozdemir-old__output_ubuntu_20.04_v465.27.txt", True),
        ("csv/netdata__help-query-gpu.txt", True),
        ("captures/utkuozdemir__linux-x86_64__nvidia-h100-mig__590.48.01.txt", False),
        ("captures/utkuozdemir__linux-x86_64__nvidia-geforce-rtx-2080-super__610.57.04.txt", False),
        ("captures/utkuozdemir__windows-x86_64__nvidia-geforce-rtx-2080-super__591.86.txt", False),
    ],
)
def test_the_probe_ends_with_the_fields_each_driver_lists(path: str, older: bool) -> None:
    plan = _plan_for((REAL / path).read_text())
    if older:
        # These lists have clocks_throttle_reasons.active and pcie.link.gen.current, and no
        # remapped_rows.* fields.
        assert plan.chosen["clock_reasons"] == "clocks_throttle_reasons.active"
        assert plan.chosen["pcie_gen"] == "pcie.link.gen.current"
        assert set(plan.dropped) == {"remap_pending", "remap_failed"}
    else:
        assert plan.chosen["clock_reasons"] == "clocks_event_reasons.active"
        assert plan.chosen["pcie_gen"] == "pcie.link.gen.gpucurrent"
        assert plan.dropped == {}
    assert plan.chosen["temp_mem_c"] == "temperature.memory"
