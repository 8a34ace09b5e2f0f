"""The watchdog dialog on the real app's demo crashed-idle host: arm (dry run), see it warn,
cancel the pending action, disarm; every request off the GUI thread."""

from __future__ import annotations

from gpufleet.core.fleet.demo import demo_state_dir
from gpufleet.ui.dialogs.watchdog import WatchdogDialog
from gpufleet_sampler import state_dir
from gpufleet_sampler.daemon import client

from tests.support.ui_helpers import demo


def test_arm_warn_cancel_disarm(qtbot, start_app, monkeypatch) -> None:
    monkeypatch.setenv("GPUFLEET_SIM_TIME_SCALE", "0.01")  # the job dies 1.8 s in
    app = start_app(demo("a100-eval"))
    try:
        dlg = WatchdogDialog(app.window, app.fleet, "a100-eval")
        qtbot.addWidget(dlg)
        qtbot.waitUntil(lambda: "watchdog disarmed" in dlg.status.text(), timeout=60_000)
        dlg.idle.setValue(0.02)  # 1.2 s (the spin box shows minutes to two decimals)
        dlg.grace.setValue(10)
        dlg.dry_run.setChecked(True)
        dlg.arm()
        qtbot.waitUntil(lambda: dlg.state.get("armed") is True, timeout=60_000)
        assert "(dry run): action provider, idle 1.2 s, grace 600 s" in dlg.status.text()

        def pending() -> bool:
            if dlg.refresh_button.isEnabled():
                if dlg.state.get("phase") == "pending":
                    return True
                dlg.request("status")
            return False

        qtbot.waitUntil(pending, timeout=60_000)
        assert dlg.cancel_button.isEnabled() and "unless cancelled" in dlg.status.text()
        dlg.cancel_button.click()
        qtbot.waitUntil(lambda: dlg.state.get("phase") == "cancelled", timeout=60_000)
        dlg.disarm_button.click()
        qtbot.waitUntil(lambda: dlg.state.get("armed") is False, timeout=60_000)
        assert "watchdog disarmed" in dlg.status.text()
    finally:
        p = state_dir.Paths(str(demo_state_dir()), state_dir.daemon_key("sim", "crashed-idle", 0))
        client.request(p, {"op": "stop"})
