"""The Simplified Chinese translation: complete, current with the source, placeholders kept,
compiled, and actually used: with the zh_CN translator installed the main window (built on
the demo fleet's simulated data) shows no English source string that has a translation.

Real tools (pyside6-lupdate / pyside6-lrelease from the venv), real Qt offscreen widgets.
"""

from __future__ import annotations

import re
import string
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.core.model.alert import Alert
from gpufleet.core.text import catalogue
from gpufleet.core.text.sampler_cost import sampler_cost_text
from gpufleet.ui import i18n
from gpufleet.ui.window.fleet_panel import alert_line
from gpufleet_sampler import protocol
from PySide6.QtCore import QCoreApplication, QLocale, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QLabel,
    QListWidget,
    QMenu,
    QTabWidget,
    QWidget,
)
from pytestqt.qtbot import QtBot

from tests.support.paths import ROOT, load_script

TS = ROOT / "resources" / "translations" / "gpufleet_zh_CN.ts"
QM = TS.with_suffix(".qm")
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?:![rsa])?\}|%\d|%n")
TAG = re.compile(r"<[^>]+>")


def _build_tool() -> object:
    return load_script("build_translations", ROOT / "tools" / "build_translations.py")


def _messages(path: Path) -> dict[tuple[str, str], tuple[list[str], str | None]]:
    """(context, source) → (translations, translation type) of a .ts file."""
    out = {}
    for ctx in ET.parse(path).getroot().iter("context"):
        name = ctx.findtext("name") or ""
        for m in ctx.iter("message"):
            tr = m.find("translation")
            assert tr is not None
            forms = [f.text or "" for f in tr.iter("numerusform")] or [tr.text or ""]
            out[(name, m.findtext("source") or "")] = (forms, tr.get("type"))
    return out


def test_every_message_is_translated() -> None:
    msgs = _messages(TS)
    assert len(msgs) > 400
    bad = [k for k, (forms, kind) in msgs.items() if kind is not None or not all(forms)]
    assert not bad, f"unfinished, obsolete or empty translations: {bad[:10]}"


def test_every_source_string_is_in_the_catalogue(tmp_path: Path) -> None:
    """A fresh lupdate over the current source: each message must be in the shipped .ts,
    translated (a new user-visible string without a translation fails here)."""
    tool = _build_tool()
    fresh = tmp_path / "fresh.ts"
    tool.lupdate(fresh, "zh_CN")  # type: ignore[attr-defined]
    extracted = _messages(fresh)
    shipped = _messages(TS)
    assert len(extracted) > 400
    missing = [k for k in extracted if k not in shipped]
    assert not missing, (
        f"{len(missing)} strings not in {TS.name} (run tools/build_translations.py --update and "
        f"translate them): {missing[:10]}"
    )
    stale = [k for k in shipped if k not in extracted]
    assert not stale, f"messages no longer in the source (run --update): {stale[:10]}"


def test_every_noop_names_its_context_literally() -> None:
    """lupdate reads only a literal context: QT_TRANSLATE_NOOP(CTX, ...) with CTX a name is
    never extracted, so the test above cannot see its string and the GUI shows it in English
    (the Compare view's causes and plot titles did)."""
    import ast

    hidden = []
    for path in sorted((ROOT / "gui" / "gpufleet").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "QT_TRANSLATE_NOOP"
                and node.args
                and not isinstance(node.args[0], ast.Constant)
            ):
                hidden.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not hidden, f"QT_TRANSLATE_NOOP with a non-literal context (lupdate skips it): {hidden}"


class _Any:
    """A str.format value that takes any format spec ({pct:.0f} as well as {host})."""

    def __format__(self, spec: str) -> str:
        return "x"


def _fields(text: str) -> list[tuple[str, str, str]]:
    """The str.format fields of a text: (name, conversion, spec), sorted."""
    return sorted(
        (name, conv or "", spec or "")
        for _lit, name, spec, conv in string.Formatter().parse(text)
        if name is not None
    )


def test_placeholders_are_kept() -> None:
    for (ctx, src), (forms, _) in _messages(TS).items():
        want = sorted(PLACEHOLDER.findall(src))
        for text in forms:
            assert sorted(PLACEHOLDER.findall(text)) == want, (ctx, src, text)
            # A translation must stay usable by str.format with the source's fields,
            # format specs included ({pct:.0f} kept as it is).
            if "{" in src:
                try:
                    src_fields = _fields(src)
                except ValueError:  # not a str.format template (a literal brace)
                    continue
                assert _fields(text) == src_fields, (ctx, src, text)
                text.format_map({name: _Any() for name, _c, _s in src_fields})


def test_compiled_qm_matches_the_ts(tmp_path: Path) -> None:
    tool = _build_tool()
    out = tmp_path / "out.qm"
    tool.lrelease(TS, out)  # type: ignore[attr-defined]
    assert QM.read_bytes() == out.read_bytes(), "run make translations (or the tool) and commit"


def test_qm_ships_as_package_data() -> None:
    assert (i18n.translations_dir() / "gpufleet_zh_CN.qm").is_file()


@pytest.mark.parametrize(
    ("setting", "system", "want"),
    [
        ("system", "zh_CN", "zh_CN"),
        ("system", "zh_SG", "zh_CN"),
        ("system", "zh_TW", "en"),
        ("system", "fr_FR", "en"),
        ("en", "zh_CN", "en"),
        ("zh_CN", "en_US", "zh_CN"),
        ("xx", "zh_CN", "en"),
    ],
)
def test_language_follows_setting_then_system(setting: str, system: str, want: str) -> None:
    assert i18n.choose_language(setting, QLocale(system)) == want


@pytest.fixture
def chinese(qapp: QApplication) -> Iterator[None]:
    before = QLocale()
    assert i18n.install(qapp, "zh_CN") == "zh_CN"
    try:
        yield
    finally:
        i18n.install(qapp, "en")  # the other tests read English
        QLocale.setDefault(before)


def _texts(root: QWidget) -> list[str]:
    """Every text a user can read in the window: labels, buttons, tab names, menus and
    their actions, table headers and cells, list items, tooltips."""
    out: list[str] = [root.windowTitle()]
    for w in [root, *root.findChildren(QWidget)]:
        if w.toolTip():
            out.append(w.toolTip())
        if isinstance(w, (QLabel, QAbstractButton)):
            out.append(w.text())
        elif isinstance(w, QTabWidget):
            out += [w.tabText(i) for i in range(w.count())]
        elif isinstance(w, QMenu):
            out.append(w.title())
            out += [a.text() for a in w.actions()]
        if isinstance(w, QListWidget):
            out += [w.item(i).text() for i in range(w.count())]
        elif isinstance(w, QAbstractItemView) and w.model() is not None:
            m = w.model()
            out += [
                str(m.headerData(c, Qt.Orientation.Horizontal) or "")
                for c in range(m.columnCount())
            ]
            for r in range(min(m.rowCount(), 50)):
                for c in range(m.columnCount()):
                    out.append(str(m.data(m.index(r, c)) or ""))
                    out.append(str(m.data(m.index(r, c), Qt.ItemDataRole.ToolTipRole) or ""))
    for act in root.findChildren(QMenu):
        out.append(act.title())
    return [TAG.sub("", t).replace("&nbsp;", " ").strip() for t in out if t]


def test_main_window_shows_no_untranslated_string(qtbot: QtBot, chinese: None) -> None:
    from gpufleet.ui.offscreen.screenshots import build_window, prefill
    from gpufleet.ui.window.main_window import TAB_NAMES

    hosts = demo_hosts()
    now = time.time()
    live, rules, _ = prefill(hosts, 900.0, now)
    w = build_window(hosts, live, rules, (1400, 900), now)
    qtbot.addWidget(w)
    # Sources that translate to something else (a brand name like "GPU" or "PID" does not).
    english = {
        src.replace("&&", "&")
        for (ctx, src), (forms, _) in _messages(TS).items()
        if forms[0] and forms[0] != src and not PLACEHOLDER.search(src)
    }
    english |= {s.replace("&", "") for s in english}
    seen: list[str] = []
    for name in TAB_NAMES:
        w.select_tab(name)
        w.redraw()
        QCoreApplication.processEvents()
        seen += _texts(w)
        # Plot axes and notes live in the pyqtgraph scene, not in widgets.
        tab = w.current_tab()
        for p in getattr(tab, "plots", []):
            seen.append(TAG.sub("", p.plot.getAxis("left").labelText or ""))
    untranslated = sorted({t for t in seen if t in english})
    assert not untranslated, f"English strings left in the zh_CN window: {untranslated}"
    # And the visible texts really are Chinese: tab names, the status bar, alert sentences.
    assert w.tabs.tabText(0) == "总览"
    assert "台主机" in w.status_label.text()
    alerts = [w.panel.alerts.item(i).text() for i in range(w.panel.alerts.count())]
    assert alerts and all(re.search(r"[\u4e00-\u9fff]", a) for a in alerts), alerts[:3]
    w.close()


def test_core_sentences_use_the_installed_translator(chinese: None) -> None:
    assert catalogue.duration(600) == "10 分钟"
    assert catalogue.verdict_label("fail") == "失败"
    assert catalogue.reason_text(0x20 | 0x04) == "功耗墙, 软件温控降频"


def _gpu_lost(host: str, gpu: int) -> Alert:
    return Alert(
        id=f"{host}:gpu_lost@{gpu}",
        rule_id="gpu_lost",
        severity="critical",
        host=host,
        gpu=gpu,
        state="firing",
        started_t=0.0,
        ended_t=None,
        evidence={},
        condition="gpu_lost",
    )


def test_a_zh_cn_alert_line_keeps_the_host_names_case(chinese: None) -> None:
    """The title opens with {Where}, which zh_CN words as "{host} 的 GPU {gpu}": the
    sentence-start capital is for the template's own first letter, never the host name's."""
    a = _gpu_lost("a100-ecc", 2)
    title = catalogue.alert_title(a)
    assert title == "a100-ecc 的 GPU 2 掉卡"
    assert alert_line(a, title, 60.0) == "a100-ecc 的 GPU 2 掉卡 · 1 分钟"
    assert catalogue.alert_sentence(a).startswith("a100-ecc 的 GPU 2 不再响应驱动")
    mig = _gpu_lost("h100-mig", protocol.mig_index(0, 3))
    assert catalogue.alert_title(mig).startswith("h100-mig 上 GPU 0 的 MIG 切片 3")


def test_an_english_alert_line_still_opens_with_a_capital() -> None:
    a = _gpu_lost("a100-ecc", 2)
    title = catalogue.alert_title(a)
    assert title == "GPU 2 of a100-ecc lost"
    assert alert_line(a, title, 60.0) == "a100-ecc · GPU 2 lost · 1 min"
    assert catalogue.alert_sentence(a).startswith("GPU 2 of a100-ecc no longer answers")


def test_settings_refusals_are_translated(chinese: None) -> None:
    from gpufleet.core.config.settings import Settings, SettingsError, validate

    with pytest.raises(SettingsError) as e:
        validate(Settings(retention_raw_days=30, retention_rollup_days=10))
    assert "降采样历史（10 天）" in e.value.localized()
    assert "retention_raw_days" in str(e.value)  # the English line names the config keys


def test_the_sampler_cost_reads_in_chinese(chinese: None) -> None:
    plan = {
        "budget_pct": 1.0,
        "planned_pct": 0.72,
        "measured_pct": 0.69,
        "tiers_s": {"links": 300.0, "slow": 600.0},
        "needed_s": {"links": 5.0, "slow": 60.0},
    }
    text = sampler_cost_text({"cpu_budget": plan})
    assert text.startswith("采样器在此主机上占用一个 CPU 核心的 0.69 %")
    assert "逐条 NVLink 链路流量每 300 秒一次" in text


def test_the_benchmark_table_heads_read_in_chinese(qtbot: QtBot, chinese: None) -> None:
    """Measured / good card / datasheet / advertised are core.text.bench's words (context
    Bench): looked up in the dialog's own context they stayed English."""
    from gpufleet.ui.dialogs.bench import BenchDialog

    d = BenchDialog(None, "h100-a", lambda _on, _cancel: {})
    qtbot.addWidget(d)
    head = d.tree.headerItem()
    heads = [head.text(i) for i in range(d.tree.columnCount())]
    assert heads[1:3] == ["实测", "正常卡"] and heads[4:6] == ["官方规格", "服务商标称"], heads
