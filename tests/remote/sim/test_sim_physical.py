"""The simulator never shows a value the card cannot: under every scenario and several seeds,
each GPU stays under its shutdown temperature (the card would be off), its memory under the
HBM's maximum, its clocks at or under their maximum, its power at or under the enforced
limit (plus NVML's few watts of measurement noise). The demo's H100 GPU 5 throttles for heat
and, before this, read 110 °C in its first sample."""

from __future__ import annotations

import pytest
from gpufleet_sampler.sim.scenarios import SCENARIOS

from tests.remote.sim.test_sim_scenarios import hello_of, record, samples


@pytest.mark.parametrize(("seed", "start_s"), [(0, "0"), (1, "0"), (0, "1800")])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_value_is_one_the_card_can_show(
    scenario: str, seed: int, start_s: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # start_s 1800: as the demo's live daemon goes on after the half hour prefilled.
    monkeypatch.setenv("GPUFLEET_SIM_START_S", start_s)
    msgs = record(scenario, 1800.0, interval=5.0, seed=seed)
    nominal = {int(g["index"]): g["nominal"] for g in hello_of(msgs).raw["gpus"]}
    bad: list[str] = []
    for s in samples(msgs):
        for r in s.rows:
            v = dict(zip(s.columns, r[1:], strict=False))
            n = nominal[int(r[0])]
            checks = [
                ("temp_gpu_c", n.get("temp_shutdown_c"), "<"),
                ("temp_mem_c", n.get("temp_mem_max_c"), "<="),
                ("sm_clock_mhz", n.get("sm_clock_max_mhz"), "<="),
                ("gfx_clock_mhz", n.get("sm_clock_max_mhz"), "<="),
                ("mem_clock_mhz", n.get("mem_clock_max_mhz"), "<="),
            ]
            for col, limit, op in checks:
                x = v.get(col)
                if x is None or limit is None:
                    continue
                ok = float(x) < float(limit) if op == "<" else float(x) <= float(limit)
                if not ok:
                    bad.append(f"t={s.t - msgs[1].t:.0f}s GPU {r[0]} {col}={x} (limit {limit})")
    assert not bad, f"{len(bad)} impossible values, first: {bad[:5]}"
