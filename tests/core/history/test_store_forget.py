"""``Store.forget_host``: a host's history deleted whole (the user removed the host and asked
for its data to go) or from a time on (the demo's prefill replacing an earlier run's
minutes), the other hosts untouched, and the store goes on recording after it."""

from __future__ import annotations

from pathlib import Path

from gpufleet.core.history.store import Store
from gpufleet.core.model.alert import Alert

from tests.support import synth

T0 = synth.floor_minute(1_780_000_000.0)
# T0 is months ago: a store with the default retention (7 days raw) deletes those samples in
# its first retention pass, which runs as the writer starts, so whether they were queued by
# then decided the test. This store keeps everything.


def _fill(st: Store, host: str) -> None:
    st.write(host, synth.make_hello(host, 2))
    for s in synth.make_samples(T0, 600, gpus=2):
        st.write(host, s)
    st.write(host, synth.make_procs(T0 + 100, 1, gpus=2))
    st.write(host, synth.make_event(T0 + 400, 2))
    alert = Alert(
        id=f"{host}-a",
        rule_id="thermal_throttle",
        severity="warning",
        host=host,
        gpu=0,
        state="firing",
        started_t=T0 + 420,
        ended_t=None,
        evidence={},
        condition="thermal_throttle",
    )
    st.write_lifecycle("state", alert.to_json())
    st.flush()


def _times(st: Store, host: str) -> list[float]:
    return [s.t for s in st.samples(host, 0, T0 + 10_000)]


def test_forget_from_a_time_on_and_whole(tmp_path: Path) -> None:
    with Store(tmp_path / "h.sqlite", retention_raw_days=1e5, retention_rollup_days=1e5) as st:
        _fill(st, "a")
        _fill(st, "b")
        st.forget_host("a", since=T0 + 300)
        a = _times(st, "a")
        assert a and max(a) < T0 + 300 and min(a) < T0 + 1  # the minutes before stay
        assert not list(st.events("a", 0, T0 + 10_000))  # the event at +400 went
        assert not st.alert_states("a", 0, T0 + 10_000)  # fired at +420: gone
        assert len(_times(st, "b")) == 600 and st.alert_states("b", 0, T0 + 10_000)
        # Recording goes on where it was cut.
        for s in synth.make_samples(T0 + 300, 60, gpus=2):
            st.write("a", s)
        st.flush()
        assert max(_times(st, "a")) >= T0 + 359
        st.forget_host("a")
        assert st.hosts() == ["b"]
        assert not _times(st, "a") and not list(st.procs("a", 0, T0 + 10_000))
        assert len(_times(st, "b")) == 600
