""" "Fill in" on the Add host dialog starts from a clean form: a second paste keeps nothing of
the first (its key file, its jump host, the name it suggested), a name the user typed stays,
and the suggested name comes from the provider or the whole address, never an octet ("203")
or a gateway's "ssh5"."""

from __future__ import annotations

import pytest
from gpufleet.core.link.host_naming import suggest_name
from gpufleet.ui.app import make_qapp
from gpufleet.ui.dialogs.hosts import HostDialog
from PySide6.QtCore import QThreadPool
from pytestqt.qtbot import QtBot


def _dialog(qtbot: QtBot) -> HostDialog:
    make_qapp()
    dlg = HostDialog(None, None, QThreadPool.globalInstance())
    qtbot.addWidget(dlg)
    return dlg


def _paste(dlg: HostDialog, command: str) -> None:
    dlg.paste.setText(command)
    dlg.fill_from_command()


def test_a_second_paste_starts_from_a_clean_form(qtbot: QtBot) -> None:
    dlg = _dialog(qtbot)
    _paste(dlg, "ssh -i ~/.ssh/lambda.pem -J me@bastion:2222 ubuntu@203.0.113.7")
    assert dlg.name.text() == "203-0-113-7" and dlg.key.text() == "~/.ssh/lambda.pem"
    assert dlg.jump.text()
    _paste(dlg, "ssh -p 31922 root@ssh5.vast.ai -L 8080:localhost:8080")
    assert (dlg.host.text(), dlg.port.value(), dlg.user.text()) == ("ssh5.vast.ai", 31922, "root")
    assert dlg.key.text() == "" and dlg.jump.text() == "" and dlg.auth.currentData() == "auto"
    assert dlg.name.text() == "vast-31922"
    # A name the user typed is theirs: a later paste leaves it.
    dlg.name.setText("my-4090")
    _paste(dlg, "ssh root@213.173.108.12 -p 14561")
    assert dlg.name.text() == "my-4090" and dlg.host.text() == "213.173.108.12"


@pytest.mark.parametrize(
    ("host", "port", "user", "name"),
    [
        ("203.0.113.7", 22, "ubuntu", "203-0-113-7"),
        ("142.214.185.187", 20544, "root", "142-214-185-187"),
        ("ssh5.vast.ai", 31922, "root", "vast-31922"),
        ("ssh.runpod.io", 22, "abc123-64411e2a", "runpod-abc123"),
        ("connect.westd.seetacloud.com", 52979, "root", "seetacloud-52979"),
        ("gpu7.example.net", 40022, "root", "gpu7"),
        ("2001:db8::7", 22, None, "2001-db8--7"),
    ],
)
def test_suggested_names(host: str, port: int, user: str | None, name: str) -> None:
    assert suggest_name(host, port, user) == name
