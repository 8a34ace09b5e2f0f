"""The CPU plan of the NVML backend: what each tier costs (timed once at start on each GPU),
the periods that fit the CPU budget (GPM for throughput, the slow tiers stretched first), and
the correction every ``BUDGET_CHECK_S`` from what the reads measured.

Where the budget makes the plan give something up, it gives up first the tiers no plot shows
per tick (``_curveless``), and those until the plan costs no more than a peer tool's refresh
of the same GPUs (``_peer_cost``): a peer that shows the same per-tick curves pays at least
that, so a sampler that read its error totals or throttle time more often than the budget
allows would cost more than the tools it replaces for nothing anyone sees change.

Python 3.8, stdlib + pynvml only.
"""

from typing import Any, Callable, Dict, List, Optional

from gpufleet_sampler import protocol_schema
from gpufleet_sampler.backends import nvml_lib as lib
from gpufleet_sampler.backends.nvml_gpu import (
    _G_ALL,
    _G_COUNTERS,
    _G_ERRORS,
    _G_FAST,
    _L_IDS,
    _PERIODS,
    _PLAN_SHARE,
    _R_MEMTEMP,
    _SCALE_RANGE,
    _STRETCH,
    _fields,
    _Gpu,
    rates_limit_s,
)
from gpufleet_sampler.backends.nvml_probe import NvmlProbe


class NvmlPlan(NvmlProbe):
    """The CPU budget's plan: timing, planning, re-planning."""

    def _time_reads(self, g: _Gpu) -> None:
        """Time the per-tick reads on this GPU (µs of this thread's CPU): the calls
        alone, then with every field group, then a one-field read, from which the field
        read's cost per call and per field follow. The plan (_plan) is made from these. The
        read with every group also primes the counters, so the first tick has rates."""
        calls = []
        for _ in range(2):  # the cheaper of two: a first call can pay one-off costs
            t0 = self._cpu()
            self._row(g, 0.0, gpm=False, mask=0)
            calls.append(self._us(t0))
        g.cost["calls"] = min(calls)
        # Each the cheaper of two as well: CPU time only grows with what else runs here
        # (caches, a shared core), so the cheaper one is nearer what the read costs. What the
        # timing still gets wrong, the measure of the running reads corrects (_check_budget).
        full = []
        for _ in range(2):
            t0 = self._cpu()
            self._row(g, 0.0, gpm=False, mask=_G_ALL)
            full.append(self._us(t0))
        fields_all = max(0.0, min(full) - g.cost["calls"])
        ids = g.fv_layouts[_G_ALL][_L_IDS]
        base, per = fields_all, 0.0
        if len(ids) > 1:
            ones = []
            for _ in range(2):
                t0 = self._cpu()
                _fields(g.h, ids[:1])
                ones.append(self._us(t0))
            one = min(ones)
            per = max(0.0, (fields_all - one) / (len(ids) - 1))
            base = max(0.0, one - per)
        g.cost["fv_call"] = round(base, 1)
        g.cost["fv_field"] = round(per, 1)
        if g.nvlink_state_fields is not None:
            # The cheaper way to read the link states: one call per link, or their fields
            # added to the medium tier's field read (which costs per field, if anything).
            t0 = self._cpu()
            self._call(g, "nvmlDeviceGetNvLinkState", lib.N.nvmlDeviceGetNvLinkState, 0)
            getter = self._us(t0)
            n = len(g.nvlink_state_fields)
            g.link_states_via = "fields" if per * n <= getter * n else "calls"
            g.cost["link_states"] = round(min(per, getter) * n, 1)
            self._build_layouts(g)

    def _fv_cost(self, g: _Gpu, mask: int) -> float:
        """µs of a field read of the groups in ``mask`` (0 when it asks for nothing)."""
        n = len(g.fv_layouts[mask][_L_IDS])
        return g.cost.get("fv_call", 0.0) + g.cost.get("fv_field", 0.0) * n if n else 0.0

    def _merge_fields(self, g: _Gpu) -> bool:
        """Whether the counters and the error counters are best read in one call whenever
        either is due: where a field read costs per call rather than per field."""
        per = g.cost.get("fv_field", 0.0)
        n = len(g.fv_layouts[_G_COUNTERS | _G_ERRORS][_L_IDS])
        return g.cost.get("fv_call", 0.0) > 4.0 * per * max(1, n)

    def _gpu_cost(self, g: _Gpu, tiers: Dict[str, float]) -> float:
        """µs per second this GPU costs under ``tiers`` (periods in s), from the timings."""
        c = g.cost
        every = self.interval
        per_s = (c.get("calls", 0.0) + c.get("gpm", 0.0)) / every + self._fv_per_s(g, tiers)
        per_s += c.get("medium", 0.0) / tiers["medium"]
        if g.link_states_via == "calls":
            per_s += c.get("link_states", 0.0) / tiers["medium"]
        per_s += c.get("slow", 0.0) / tiers["slow"]
        if g.link_fields is not None:
            per_s += c.get("links", 0.0) / tiers["links"]
        # Process lists come every procs interval (the loop's, 2 s by default).
        per_s += c.get("procs", 0.0) / self._needed["putil"]
        if g.f_putil is not None:
            # Only paid while a process is on the GPU; planned as if one always were.
            per_s += c.get("putil", 0.0) / tiers["putil"]
        return per_s

    def _fv_per_s(self, g: _Gpu, tiers: Dict[str, float]) -> float:
        """µs per second of this GPU's field reads under ``tiers``: the byte counters every
        ``rates`` period (every tick unless stretched), the counters and the error counters
        on theirs; a group read with the per-tick byte counters shares their call, alone it
        pays one; where a field read costs per call (fv_merge) the due groups share one."""
        every = self.interval
        t_fast = max(every, tiers["rates"])
        t_cnt = max(every, tiers["fields"])
        fast = self._fv_cost(g, _G_FAST)
        if t_fast <= every:
            cnt = self._fv_cost(g, _G_FAST | _G_COUNTERS) - fast
            err = self._fv_cost(g, _G_FAST | _G_ERRORS) - fast
            if g.fv_merge:
                both = self._fv_cost(g, _G_ALL) - fast
                return fast / every + both / min(t_cnt, tiers["medium"])
            return fast / every + cnt / t_cnt + err / tiers["medium"]
        if g.fv_merge:
            return self._fv_cost(g, _G_ALL) / min(t_fast, t_cnt, tiers["medium"])
        cnt = self._fv_cost(g, _G_COUNTERS)
        err = self._fv_cost(g, _G_ERRORS)
        return fast / t_fast + cnt / t_cnt + err / tiers["medium"]

    def _stretch(
        self,
        tiers: Dict[str, float],
        total: Callable[[], float],
        target: float,
        only: Optional[List[str]] = None,
    ) -> None:
        """Stretch the tiers in _STRETCH's order (those in ``only`` where given), each a
        period step at a time up to its limit, until ``total()`` fits ``target``; a tier
        whose stretching saves nothing here (no NVLink for the per-link tier, GPM for the
        byte counters) stays as needed, so the plan names only what it gave up."""
        limits = dict(_STRETCH)
        live = [g for g in self._gpus if not g.lost]
        # The byte counters no longer than the narrowest counter allows (rates_limit_s).
        limits["rates"] = min(
            [limits["rates"]] + [rates_limit_s(g, self.interval, limits["rates"]) for g in live]
        )
        order = [name for name, _limit in _STRETCH if only is None or name in only]
        for i, name in enumerate(order):
            limit = max(tiers[name], limits[name])
            if total() <= target:
                return
            if not self._stretch_saves(tiers, total, name, limit, order[i + 1 :], limits):
                continue
            while total() > target and tiers[name] < limit:
                longer = [p for p in _PERIODS if p > tiers[name] * 1.0001]
                tiers[name] = min(limit, longer[0] if longer else limit)

    @staticmethod
    def _stretch_saves(
        tiers: Dict[str, float],
        total: Callable[[], float],
        name: str,
        limit: float,
        later: List[str],
        limits: Dict[str, float],
    ) -> bool:
        """Whether stretching ``name`` to ``limit`` saves anything once the tiers stretched
        after it are at their limits too: where one call reads several groups (fv_merge), one
        group stretched alone saves nothing until the others are."""
        was = {k: tiers[k] for k in [name, *later]}
        try:
            for k in later:
                tiers[k] = max(tiers[k], limits[k])
            before = total()
            tiers[name] = limit
            return total() < before * 0.9999
        finally:
            tiers.update(was)

    @staticmethod
    def _curveless(live: List[_Gpu]) -> List[str]:
        """The tiers whose values no plot shows per tick on these GPUs, or only as a
        setting that changes when someone changes it: error totals, per-link NVLink (read at
        its needed period anyway while someone watches it), per-process utilization, the
        medium tier (the enforced power limit and the PCIe link, held between reads, are
        exact until someone sets them; error counters and link states raise events), and
        the counters (energy, throttle time: alerts and totals) where no GPU's counters hold
        HBM temperature, which the Thermal tab plots."""
        free = ["slow", "links", "putil", "medium"]
        if not any(k[0] == _R_MEMTEMP for g in live for k in g.fv_keep):
            free.append("fields")
        return free

    def _peer_cost(self, g: _Gpu) -> float:
        """µs per second of the cheapest reads that show this GPU's per-tick curves and its
        process list every tick, as a peer tool's refresh makes them (nvitop's kind): the
        per-tick calls and GPM, the byte counters where no GPM gives throughput, the
        process lists; from the same start-up timing as the plan."""
        c = g.cost
        tick = c.get("calls", 0.0) + c.get("gpm", 0.0) + c.get("procs", 0.0)
        return (tick + self._fv_cost(g, _G_FAST)) / self.interval

    def _plan(self) -> None:
        """Fit the CPU budget: start from the periods each tier is needed at, and stretch
        the slow tiers first (error totals, per-link NVLink, per-process utilization, the
        medium tier, the counters), each doubled up to its limit, until the GPUs' cost fits.
        Where anything must be given up, the tiers no plot shows per tick go first, until
        the plan costs no more than a peer's refresh (see the module docstring). The
        per-tick calls are never stretched: they are what the plots show."""
        live = [g for g in self._gpus if not g.lost]
        tiers = dict(self._needed)
        # µs of CPU per second: the budget is per GPU and per tick (1.25 ms by default).
        budget = self.cpu_budget_pct / 100.0 / 8.0 * 1e6 * max(1, len(live)) / self.interval
        # Planned to 80 % of it: the rest is for what no start-up timing sees (encoding the
        # messages, /proc reads of new processes, the event thread).
        target = budget * _PLAN_SHARE
        for g in live:
            g.fv_merge = self._merge_fields(g)

        scale = self._cost_scale

        def total() -> float:
            return sum(self._gpu_cost(g, tiers) for g in live) * scale

        if total() > target:
            # The cheaper source first: throughput from GPM frees the per-tick field read.
            for g in live:
                self._use_gpm_throughput(g)
        self.peer_pct = round(sum(self._peer_cost(g) for g in live) * scale / 1e4, 3)
        if total() > target:
            # The budget bites: where it does not, nothing is given up, however the plan
            # compares with a peer (at its needed periods the sampler reads more than one).
            aim = min(target, self.peer_pct * 1e4)
            self._stretch(tiers, total, aim, only=self._curveless(live))
        self._stretch(tiers, total, target)
        self.tiers = tiers
        self.links_interval = tiers["links"]
        spent = total()
        self.plan_version += 1
        measured = self.plan_facts.get("measured_pct")
        self.plan_facts = protocol_schema.build(
            (protocol_schema.CPU_BUDGET_KEYS,),
            {
                "version": self.plan_version,
                "budget_pct": round(budget / 1e4, 3),
                "planned_pct": round(spent / 1e4, 3),
                "within": spent <= target * 1.0001,
                "per_gpu_us_per_s": round(spent / max(1, len(live)), 1),
                "tiers_s": {k: round(v, 3) for k, v in sorted(tiers.items())},
                "needed_s": {k: round(v, 3) for k, v in sorted(self._needed.items())},
                # What the plan gave up: each tier read less often than it is needed at.
                "gave_up": {
                    k: [round(self._needed[k], 3), round(v, 3)]
                    for k, v in sorted(tiers.items())
                    if v > self._needed[k] * 1.0001
                },
                # Seconds between PCIe / NVLink throughput values on the GPUs that take them
                # from the byte counters (null: every GPU has them per tick from GPM, or none).
                "throughput_s": self._throughput_s(live, tiers),
                "workers": self._workers,
                "cpus": self._cpus,
                # Which GPUs of a tick the reader threads take (see nvml_pool).
                "pooled": "every GPU" if self._pool_all else "long reads" if self._pool else "none",
                # False until the first ticks have timed GPM and seen what it answers: the plan
                # of a hello written at start-up is provisional.
                "settled": all(g.gpm_checks == 0 for g in live if g.gpm),
                # What the reads cost over the last BUDGET_CHECK_S (% of a core; None before the
                # first measure) and the factor the plan applies to its start-up timing.
                "measured_pct": measured,
                "cost_scale": round(scale, 3),
            },
        )

    def _throughput_s(self, live: List[_Gpu], tiers: Dict[str, float]) -> Optional[float]:
        counted = [g for g in live if g.fv_layouts and g.fv_layouts[_G_FAST][_L_IDS]]
        return round(max(self.interval, tiers["rates"]), 3) if counted else None

    def _plan_again(self, mono: float) -> None:
        """A new plan, in force at once: no tier waits longer than its new period."""
        self._plan()
        for g in self._gpus:
            if g.next_fields is not None:
                self._clamp_schedule(g, mono)

    def _start_measure(self, mono: float) -> None:
        self._measure_from = mono
        for g in self._gpus:
            g.spent = 0.0

    def _check_budget(self, mono: float) -> None:
        """Compare what the reads cost since the last check (their threads' CPU, the same
        work the start-up timing priced) with the plan, and plan again from the measure
        where the plan is off: over the budget, or under half of it with a tier stretched."""
        start = self._measure_from
        used = sum(g.spent for g in self._gpus)
        self._start_measure(mono)
        span = mono - start if start is not None else 0.0
        if span <= 0:
            return
        measured = used / span / 1e4  # µs per s -> % of a core
        facts = self.plan_facts
        facts["measured_pct"] = round(measured, 3)
        planned = float(facts.get("planned_pct") or 0.0)
        budget = float(facts.get("budget_pct") or 0.0)
        if planned <= 0 or budget <= 0:
            return
        stretched = any(self.tiers[k] > self._needed[k] * 1.0001 for k in self._needed)
        if measured > budget or (measured < 0.5 * budget and stretched):
            lo, hi = _SCALE_RANGE
            scale = min(hi, max(lo, self._cost_scale * measured / planned))
            if abs(scale - self._cost_scale) > 0.05 * self._cost_scale:
                self._cost_scale = scale
                self._plan_again(mono)  # the new plan keeps the measured figure

    def cpu_plan(self) -> Dict[str, Any]:
        """The CPU budget and the plan that fits it (hello's ``cpu_budget``)."""
        return dict(self.plan_facts, tiers_s=dict(self.plan_facts.get("tiers_s") or {}))
