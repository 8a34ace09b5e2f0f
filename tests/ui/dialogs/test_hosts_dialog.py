"""Host management dialogs: paste an ssh command, save to config.toml (off the GUI thread),
import from an ssh config with Include, and a clear line for bad input."""

from __future__ import annotations

from pathlib import Path

from gpufleet.core.config.configfile import load_config
from gpufleet.ui.app import make_qapp
from gpufleet.ui.dialogs.hosts import HostDialog, ImportDialog
from PySide6.QtCore import QThreadPool
from pytestqt.qtbot import QtBot


def test_paste_ssh_command_fills_the_form_and_save_writes_the_config(
    qtbot: QtBot, isolated_dirs: Path
) -> None:
    make_qapp()
    dlg = HostDialog(None, None, QThreadPool.globalInstance())
    qtbot.addWidget(dlg)
    dlg.paste.setText("ssh -p 40022 -i ~/.ssh/rent root@gpu7.example.net")
    dlg.fill_from_command()
    assert dlg.host.text() == "gpu7.example.net"
    assert dlg.port.value() == 40022
    assert dlg.user.text() == "root"
    assert dlg.key.text().endswith("rent") and dlg.auth.currentText() == "key"
    assert dlg.name.text() == "gpu7"
    dlg.price.setValue(1.25)
    assert dlg.collector.currentText() == "auto"
    dlg.collector.setCurrentText("nvidia-smi")  # a minimal image without python3
    with qtbot.waitSignal(dlg.saved, timeout=10_000) as sig:
        dlg.save()
    cfg, old = sig.args
    assert old is None and cfg.name == "gpu7"
    saved = load_config()
    h = saved.host("gpu7")
    assert h is not None and h.port == 40022 and h.price_per_hour == 1.25
    assert h.collector == "nvidia-smi"


def test_fill_in_from_the_host_first_form_keeps_port_and_key(qtbot: QtBot) -> None:
    make_qapp()
    dlg = HostDialog(None, None, QThreadPool.globalInstance())
    qtbot.addWidget(dlg)
    dlg.paste.setText("ssh root@213.173.108.12 -p 14561 -i ~/.ssh/id_ed25519 -N")
    dlg.fill_from_command()
    assert (dlg.host.text(), dlg.port.value()) == ("213.173.108.12", 14561)
    assert dlg.key.text() == "~/.ssh/id_ed25519" and dlg.auth.currentText() == "key"
    # What was not used is said, not dropped.
    assert "ignored" in dlg.status.text() and "-N" in dlg.status.text()
    dlg.paste.setText("ssh root@213.173.108.12 -p 14561 -Z")
    dlg.fill_from_command()
    assert "unknown ssh option -Z" in dlg.status.text()


def test_bad_command_and_missing_name_are_one_clear_line(qtbot: QtBot) -> None:
    make_qapp()
    dlg = HostDialog(None, None, QThreadPool.globalInstance())
    qtbot.addWidget(dlg)
    dlg.paste.setText("scp file host:")
    dlg.fill_from_command()
    assert "ssh" in dlg.status.text()
    dlg.save()
    assert "name" in dlg.status.text()


def test_import_from_ssh_config_with_include(qtbot: QtBot, isolated_dirs: Path) -> None:
    make_qapp()
    ssh = isolated_dirs / "ssh"
    ssh.mkdir()
    (ssh / "more.conf").write_text("Host box2\n  HostName 198.51.100.2\n  User ubuntu\n")
    cfgfile = ssh / "config"
    cfgfile.write_text(
        f"Include {ssh / 'more.conf'}\n\nHost box1\n  HostName 198.51.100.1\n  Port 2201\n"
        "\nHost *\n  ServerAliveInterval 30\n"
    )
    dlg = ImportDialog(None, {"box2"}, cfgfile)
    qtbot.addWidget(dlg)
    qtbot.waitUntil(lambda: dlg.ok.isEnabled(), timeout=10_000)
    assert [h.name for h in dlg.rows] == ["box2", "box1"]
    assert [h.name for h in dlg.checked()] == ["box1"]  # box2 is already a host
    with qtbot.waitSignal(dlg.imported, timeout=10_000) as sig:
        dlg.ok.click()
    (h,) = sig.args[0]
    assert (h.name, h.host, h.port) == ("box1", "198.51.100.1", 2201)
    assert load_config().host("box1") is not None


def test_the_dialog_speaks_chinese_in_its_errors_and_choices(qtbot: QtBot) -> None:
    from gpufleet.ui import i18n

    qapp = make_qapp()
    assert i18n.install(qapp, "zh_CN") == "zh_CN"
    try:
        dlg = HostDialog(None, None, QThreadPool.globalInstance())
        qtbot.addWidget(dlg)
        shown = [dlg.auth.itemText(i) for i in range(dlg.auth.count())]
        assert shown == ["自动", "SSH 代理", "密钥", "密码"]
        for bad, words in (
            ("ssh root@1.2.3.4 -p 14561 -Z", "未知的 ssh 选项 -Z"),
            ("scp a b", "不是 ssh 命令"),
            ("ssh -p 99999 h", "无效：应为 1 到 65535 之间的数字"),
        ):
            dlg.paste.setText(bad)
            dlg.fill_from_command()
            assert words in dlg.status.text(), dlg.status.text()
        dlg.paste.setText("ssh -i ~/.ssh/k root@h.example")
        dlg.fill_from_command()
        assert dlg.auth.currentData() == "key" and dlg.auth.currentText() == "密钥"
        assert dlg.config().auth == "key"
    finally:
        i18n.install(qapp, "en")
