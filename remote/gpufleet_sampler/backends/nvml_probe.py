"""Start-up probing of the NVML backend: what each GPU answers (and why not), the per-tick
reads and struct layouts built from that, the field, link, GPM and slow-tier probes; and the
facts they give (hello, info, the start-of-rental check).

Python 3.8, stdlib + pynvml only.
"""

import socket
from typing import Any, Dict, List, Tuple

from gpufleet_sampler import protocol, protocol_schema
from gpufleet_sampler.backends import nvml_lib as lib
from gpufleet_sampler.backends import nvml_mig
from gpufleet_sampler.backends.nvml_base import NvmlBase
from gpufleet_sampler.backends.nvml_gpu import (
    _ALL_LINKS,
    _FAST_ROLES,
    _G_ALL,
    _G_COUNTERS,
    _G_ERRORS,
    _G_FAST,
    _MED_ROLES,
    _NROLES,
    _R_DBE,
    _R_ENERGY,
    _R_MEMTEMP,
    _R_NVL_RX,
    _R_NVL_TX,
    _R_PCIE_RX,
    _R_PCIE_TX,
    _R_PINST,
    _R_REPLAY,
    _R_SBE,
    _R_VBRAKE,
    _R_VHW,
    _R_VOLD,
    _R_VPOW,
    _R_VSW,
    _ROW_ORDER,
    _S_FIELDS,
    FI_ECC_DBE_AGG,
    FI_ECC_DBE_VOL,
    FI_ECC_SBE_AGG,
    FI_ECC_SBE_VOL,
    FI_ENERGY,
    FI_MEMORY_TEMP,
    FI_NVLINK_CRC_DATA_TOTAL,
    FI_NVLINK_CRC_FLIT_TOTAL,
    FI_NVLINK_ECC_DATA_TOTAL,
    FI_NVLINK_LINK_COUNT,
    FI_NVLINK_RECOVERY_TOTAL,
    FI_NVLINK_REPLAY_TOTAL,
    FI_NVLINK_RX_KIB,
    FI_NVLINK_SPEED_MBPS,
    FI_NVLINK_STATE,
    FI_NVLINK_TX_KIB,
    FI_PCIE_REPLAY,
    FI_PCIE_RX_BYTES,
    FI_PCIE_TX_BYTES,
    FI_POWER_INSTANT,
    FI_VIOL_HW_POWER_BRAKE,
    FI_VIOL_HW_THERM,
    FI_VIOL_POWER,
    FI_VIOL_SW_THERM,
    FI_VIOL_THERMAL_OLD,
    GPM_ANY_TENSOR,
    GPM_DRAM_BW,
    GPM_FP16,
    GPM_FP32,
    GPM_FP64,
    GPM_NVLINK_RX,
    GPM_NVLINK_TX,
    GPM_PCIE_RX,
    GPM_PCIE_TX,
    GPM_SM_OCCUPANCY,
    GPM_SM_UTIL,
    _code_name,
    _fid_text,
    _fields,
    _fv_struct,
    _fv_value,
    _gpm_layout,
    _Gpu,
    _int,
    _layout,
    _Lost,
    _lost_row,
    _monotonic,
    _reason,
    _text,
    _watts,
)
from gpufleet_sampler.procs import holders as gpu_holders


class NvmlProbe(NvmlBase):
    """Probing at start-up, and the facts it found."""

    def _read_host(self) -> Dict[str, Any]:
        host: Dict[str, Any] = {"hostname": socket.gethostname(), "backend": "nvml"}
        for key, fn_name in (
            ("driver_version", "nvmlSystemGetDriverVersion"),
            ("nvml_version", "nvmlSystemGetNVMLVersion"),
        ):
            try:
                host[key] = str(getattr(lib.N, fn_name)())
            except (lib.N.NVMLError, AttributeError):
                host[key] = None
        cuda = None
        for fn_name in ("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"):
            try:
                v = int(getattr(lib.N, fn_name)())
                cuda = "{}.{}".format(v // 1000, (v % 1000) // 10)
                break
            except (lib.N.NVMLError, AttributeError):
                continue
        host["cuda_version"] = cuda
        return host

    def _probe_safe(self, g: _Gpu) -> None:
        """Probe one GPU (on the pool at start-up); a lost GPU is marked, not raised."""
        if g.lost:
            return
        try:
            self._probe(g)
        except _Lost:
            g.lost = True

    def _probe(self, g: _Gpu) -> None:
        h = g.h
        info = g.info
        for key, call in (
            ("name", "nvmlDeviceGetName"),
            ("uuid", "nvmlDeviceGetUUID"),
            ("serial", "nvmlDeviceGetSerial"),
            ("vbios", "nvmlDeviceGetVbiosVersion"),
        ):
            fn = self._fn(call)
            v = self._try(g, call, fn) if fn else None
            info[key] = _text(v)
        pci = self._try(g, "nvmlDeviceGetPciInfo_v3", lib.N.nvmlDeviceGetPciInfo_v3)
        info["pci_bus_id"] = _text(getattr(pci, "busId", None)) if pci is not None else None
        for key, call in (
            ("arch", "nvmlDeviceGetArchitecture"),
            ("brand", "nvmlDeviceGetBrand"),
            ("persistence_mode", "nvmlDeviceGetPersistenceMode"),
            ("compute_mode", "nvmlDeviceGetComputeMode"),
            ("virtualization_mode", "nvmlDeviceGetVirtualizationMode"),
        ):
            fn = self._fn(call)
            v = self._try(g, call, fn) if fn else None
            info[key] = int(v) if v is not None else None
        cc = self._try(
            g, "nvmlDeviceGetCudaComputeCapability", lib.N.nvmlDeviceGetCudaComputeCapability
        )
        info["compute_capability"] = "{}.{}".format(cc[0], cc[1]) if cc else None
        mig = self._try(g, "nvmlDeviceGetMigMode", lib.N.nvmlDeviceGetMigMode)
        info["mig_mode"] = int(mig[0]) if mig else None
        ecc = self._try(g, "nvmlDeviceGetEccMode", lib.N.nvmlDeviceGetEccMode)
        info["ecc_mode"] = int(ecc[0]) if ecc else None

        nom = g.nominal
        v = self._try(
            g, "nvmlDeviceGetMaxClockInfo", lib.N.nvmlDeviceGetMaxClockInfo, lib.N.NVML_CLOCK_SM
        )
        nom["sm_clock_max_mhz"] = _int(v)
        v = self._try(
            g, "nvmlDeviceGetMaxClockInfo", lib.N.nvmlDeviceGetMaxClockInfo, lib.N.NVML_CLOCK_MEM
        )
        nom["mem_clock_max_mhz"] = _int(v)
        fn = self._fn("nvmlDeviceGetDefaultApplicationsClock")
        if fn is not None:
            v = self._try(g, "nvmlDeviceGetDefaultApplicationsClock", fn, lib.N.NVML_CLOCK_SM)
            nom["sm_clock_base_mhz"] = _int(v)
        v = self._try(
            g,
            "nvmlDeviceGetPowerManagementDefaultLimit",
            lib.N.nvmlDeviceGetPowerManagementDefaultLimit,
        )
        nom["power_default_w"] = _watts(v)
        v = self._try(g, "nvmlDeviceGetEnforcedPowerLimit", lib.N.nvmlDeviceGetEnforcedPowerLimit)
        nom["power_enforced_w"] = _watts(v)
        g.power_limit_w = nom["power_enforced_w"]
        if v is None:
            g.unsupported["power_limit_w"] = g.probes.get("nvmlDeviceGetEnforcedPowerLimit", "")
        v = self._try(
            g,
            "nvmlDeviceGetPowerManagementLimitConstraints",
            lib.N.nvmlDeviceGetPowerManagementLimitConstraints,
        )
        if v:
            nom["power_min_w"], nom["power_max_w"] = _watts(v[0]), _watts(v[1])
        for key, thr in (
            ("temp_slowdown_c", "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN"),
            ("temp_shutdown_c", "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN"),
            ("temp_mem_max_c", "NVML_TEMPERATURE_THRESHOLD_MEM_MAX"),
        ):
            v = self._try(
                g,
                "nvmlDeviceGetTemperatureThreshold:" + thr,
                lib.N.nvmlDeviceGetTemperatureThreshold,
                getattr(lib.N, thr),
            )
            nom[key] = _int(v)
        v = self._try(
            g, "nvmlDeviceGetMaxPcieLinkGeneration", lib.N.nvmlDeviceGetMaxPcieLinkGeneration
        )
        nom["pcie_max_gen"] = _int(v)
        v = self._try(g, "nvmlDeviceGetMaxPcieLinkWidth", lib.N.nvmlDeviceGetMaxPcieLinkWidth)
        nom["pcie_max_width"] = _int(v)

        # Per-tick calls, each with its fallback.
        g.f_util, _ = self._pick(g, "util_gpu_pct", [("nvmlDeviceGetUtilizationRates", ())])
        if g.f_util is None:
            g.unsupported["util_mem_pct"] = g.unsupported["util_gpu_pct"]
        for attr, col, typ in (
            ("clk_sm", "sm_clock_mhz", lib.N.NVML_CLOCK_SM),
            ("clk_mem", "mem_clock_mhz", lib.N.NVML_CLOCK_MEM),
            ("clk_gfx", "gfx_clock_mhz", lib.N.NVML_CLOCK_GRAPHICS),
        ):
            fn, _ = self._pick(g, col, [("nvmlDeviceGetClockInfo", (typ,))])
            setattr(g, attr, fn is not None)
        g.f_temp, _ = self._pick(
            g,
            "temp_gpu_c",
            [
                ("nvmlDeviceGetTemperatureV", (lib.N.NVML_TEMPERATURE_GPU,)),
                ("nvmlDeviceGetTemperature", (lib.N.NVML_TEMPERATURE_GPU,)),
            ],
        )
        g.f_pstate, _ = self._pick(g, "pstate", [("nvmlDeviceGetPerformanceState", ())])
        g.f_reasons, _ = self._pick(
            g,
            "clock_reasons",
            [
                ("nvmlDeviceGetCurrentClocksEventReasons", ()),
                ("nvmlDeviceGetCurrentClocksThrottleReasons", ()),
            ],
        )
        g.f_power, _ = self._pick(g, None, [("nvmlDeviceGetPowerUsage", ())])
        g.f_fan, _ = self._pick(g, "fan_pct", [("nvmlDeviceGetFanSpeed", ())])
        v2 = getattr(lib.N, "nvmlMemory_v2", None)
        mem = None
        if v2 is not None:
            try:
                mem = lib.N.nvmlDeviceGetMemoryInfo(h, v2)
                g.mem_v2 = True
            except lib.N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except (lib.N.NVMLError, AttributeError) as e:
                g.probes["nvmlDeviceGetMemoryInfo_v2"] = _reason(e, "nvmlDeviceGetMemoryInfo_v2")
        if mem is None:
            # v1's "used" includes what the driver reserves; better than nothing, noted.
            mem = self._try(g, "nvmlDeviceGetMemoryInfo", lib.N.nvmlDeviceGetMemoryInfo)
        if mem is not None:
            g.f_mem = lib.N.nvmlDeviceGetMemoryInfo
            nom["mem_total_bytes"] = int(mem.total)
            nom["mem_reserved_bytes"] = int(mem.reserved) if g.mem_v2 else None
        else:
            g.unsupported["mem_used_bytes"] = g.probes.get("nvmlDeviceGetMemoryInfo", "")

        self._probe_fields(g)
        self._probe_gpm(g)

        # Columns that have no source at all after fields, calls and GPM.
        if g.f_power is None and g.role[_R_PINST] < 0:
            g.unsupported["power_w"] = g.probes.get("nvmlDeviceGetPowerUsage", "")
        if g.role[_R_ENERGY] < 0:
            g.f_energy, _ = self._pick(g, "energy_j", [("nvmlDeviceGetTotalEnergyConsumption", ())])

        # Medium tier: read now, so the first rows are complete.
        t0 = self._cpu()
        self._medium(g, first=True)
        # The link states are timed on their own (_time_reads): they may ride in a field read.
        g.cost["medium"] = max(0.0, self._us(t0) - g.cost.pop("link_states_read", 0.0))
        if g.pcie_gen is None:
            g.unsupported["pcie_gen"] = g.probes.get("nvmlDeviceGetCurrPcieLinkGeneration", "")
        if g.pcie_width is None:
            g.unsupported["pcie_width"] = g.probes.get("nvmlDeviceGetCurrPcieLinkWidth", "")
        if g.role[_R_REPLAY] < 0 and g.pcie_replays_call is None:
            g.unsupported["pcie_replays"] = g.probes.get("nvmlDeviceGetPcieReplayCounter", "")
        if g.nvlink_up is None:
            g.unsupported["nvlink_up"] = g.probes.get(
                "nvmlDeviceGetNvLinkState", "NotSupported: no NVLink links"
            )

        # Slow tier.
        self._probe_slow(g)

        # Processes. The minor number names the device file whose holders are this GPU's
        # processes as a container sees them.
        minor_fn = self._fn("nvmlDeviceGetMinorNumber")
        minor = None
        if minor_fn is not None:
            minor = self._try(g, "nvmlDeviceGetMinorNumber", minor_fn)
        g.minor = int(minor) if minor is not None else None
        g.f_procs_c, _ = self._pick(
            g,
            None,
            [
                ("nvmlDeviceGetComputeRunningProcesses_v3", ()),
                ("nvmlDeviceGetComputeRunningProcesses_v2", ()),
                ("nvmlDeviceGetComputeRunningProcesses", ()),
            ],
        )
        g.f_procs_g, _ = self._pick(
            g,
            None,
            [
                ("nvmlDeviceGetGraphicsRunningProcesses_v3", ()),
                ("nvmlDeviceGetGraphicsRunningProcesses_v2", ()),
                ("nvmlDeviceGetGraphicsRunningProcesses", ()),
            ],
        )
        t0 = self._cpu()
        for f in (g.f_procs_c, g.f_procs_g):
            if f is not None:
                self._call(g, getattr(f, "__name__", "processes"), f)
        g.cost["procs"] = self._us(t0)
        fn = self._fn("nvmlDeviceGetProcessUtilization")
        if fn is not None:
            t0 = self._cpu()
            try:
                fn(g.h, 0)
                g.f_putil = fn
            except lib.N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except lib.N.NVMLError_NotFound:
                g.f_putil = fn  # supported, just no samples yet
            except lib.N.NVMLError as e:
                if getattr(e, "value", None) == lib.N.NVML_SUCCESS:
                    g.f_putil = fn  # the wrapper's way of saying "no samples"
                else:
                    g.probes["nvmlDeviceGetProcessUtilization"] = _reason(
                        e, "nvmlDeviceGetProcessUtilization"
                    )
            g.cost["putil"] = self._us(t0)

        self._build_reads(g)
        self._time_reads(g)
        if g.link_fields is not None:
            # Primes the per-link counters (the first links message has states and speeds).
            t0 = self._cpu()
            self._links_read(g)
            g.cost["links"] = self._us(t0)

    def _build_reads(self, g: _Gpu) -> None:
        """The per-tick calls as (function, extra args), None where unsupported, plus the
        struct layouts that read their results in one C call instead of attribute by
        attribute (pynvml's structs resolve every attribute in Python)."""
        ci = lib.N.nvmlDeviceGetClockInfo
        g.reads = [
            (g.f_util, ()),
            (ci if g.clk_sm else None, (lib.N.NVML_CLOCK_SM,)),
            (ci if g.clk_mem else None, (lib.N.NVML_CLOCK_MEM,)),
            (ci if g.clk_gfx else None, (lib.N.NVML_CLOCK_GRAPHICS,)),
            (g.f_temp, (lib.N.NVML_TEMPERATURE_GPU,)),
            (g.f_pstate, ()),
            (g.f_reasons, ()),
            (g.f_fan, ()),
            (g.f_power, ()),
            (g.f_mem, (lib.N.nvmlMemory_v2,) if g.mem_v2 else ()),
            (g.f_energy, ()),
            (None, ()),
        ]
        self._build_layouts(g)
        g.u_struct = _layout(getattr(lib.N, "c_nvmlUtilization_t", None), "=II")
        if g.mem_v2:
            g.m_struct = _layout(getattr(lib.N, "c_nvmlMemory_v2_t", None), "=I4xQQQQ")
            g.m_used = 4
        else:
            g.m_struct = _layout(getattr(lib.N, "c_nvmlMemory_t", None), "=QQQ")
            g.m_used = 2

    def _build_layouts(self, g: _Gpu) -> None:
        """One field read per combination of due groups (see _G_*): its ids, its struct and
        where each role sits in it. The link states join the medium tier's group when the
        start-up timing found fields the cheaper way to read them."""
        g.fv_layouts = {}
        states = g.nvlink_state_fields if g.link_states_via == "fields" else None
        for mask in range(_G_ALL + 1):
            keep = sorted((k for k in g.fv_keep if k[3] & mask), key=lambda k: k[3])
            ids: List[Any] = [k[1] for k in keep]
            types = [k[2] for k in keep]
            role = [-1] * _NROLES
            for pos, k in enumerate(keep):
                role[k[0]] = pos * 7
            st_pos = -1
            n_st = 0
            if states and mask & _G_ERRORS:
                st_pos = len(ids) * 7
                n_st = len(states)
                ids = ids + list(states)
                # Link states are unsigned ints; the struct reads them that way.
                types = types + [g.fv_state_type] * n_st
            reads = list(g.reads)
            reads[_S_FIELDS] = (lib.N.nvmlDeviceGetFieldValues if ids else None, (ids,))
            g.fv_layouts[mask] = (
                reads,
                ids,
                _fv_struct(types),
                tuple(types),
                role,
                st_pos,
                n_st,
            )

    def _probe_fields(self, g: _Gpu) -> None:
        """Ask for every candidate field once; keep those that answer."""
        links_fv = _fields(g.h, [FI_NVLINK_LINK_COUNT])
        links = 0
        if links_fv is not None and links_fv[0].nvmlReturn == lib.N.NVML_SUCCESS:
            links = int(_fv_value(links_fv[0]) or 0)
        g.nvlink_links = links
        g.nominal["nvlink_links"] = links
        if links:
            sp = _fields(g.h, [(FI_NVLINK_SPEED_MBPS, 0)])
            if sp is not None and sp[0].nvmlReturn == lib.N.NVML_SUCCESS:
                g.nominal["nvlink_link_bps"] = int(_fv_value(sp[0]) or 0) * 1000000
            ids = [(FI_NVLINK_STATE, link) for link in range(links)]
            st = _fields(g.h, ids)
            if st is not None and all(r.nvmlReturn == lib.N.NVML_SUCCESS for r in st):
                g.nvlink_state_fields = ids
                g.fv_state_type = int(st[0].valueType)
            self._probe_links(g, links)
        else:
            why = "NotSupported: this GPU has no NVLink links (field 91 = 0)"
            if links_fv is None or links_fv[0].nvmlReturn != lib.N.NVML_SUCCESS:
                code = _code_name(int(links_fv[0].nvmlReturn)) if links_fv is not None else ""
                why = "{}: field 91 (NVLink link count): no NVLink here, PCIe only".format(
                    code or "NotSupported"
                )
            g.links_why = why
        cand: List[Tuple[int, Any]] = [
            (_R_ENERGY, FI_ENERGY),
            (_R_MEMTEMP, FI_MEMORY_TEMP),
            (_R_PCIE_TX, FI_PCIE_TX_BYTES),
            (_R_PCIE_RX, FI_PCIE_RX_BYTES),
            (_R_REPLAY, FI_PCIE_REPLAY),
            (_R_VPOW, FI_VIOL_POWER),
            (_R_VBRAKE, FI_VIOL_HW_POWER_BRAKE),
            (_R_VSW, FI_VIOL_SW_THERM),
            (_R_VHW, FI_VIOL_HW_THERM),
            (_R_VOLD, FI_VIOL_THERMAL_OLD),
            (_R_SBE, FI_ECC_SBE_VOL),
            (_R_DBE, FI_ECC_DBE_VOL),
        ]
        if links:
            cand.append((_R_NVL_TX, (FI_NVLINK_TX_KIB, _ALL_LINKS)))
            cand.append((_R_NVL_RX, (FI_NVLINK_RX_KIB, _ALL_LINKS)))
        if g.f_power is None:
            cand.append((_R_PINST, FI_POWER_INSTANT))
        fv = _fields(g.h, [c[1] for c in cand], g)
        keep: List[Tuple[int, Any, int]] = []
        if fv is not None:
            for (role, fid), r in zip(cand, fv):  # noqa: B905 - Python 3.8
                ret = int(r.nvmlReturn)
                if ret == lib.N.NVML_SUCCESS:
                    keep.append((role, fid, int(r.valueType)))
                else:
                    g.probes["field {}".format(_fid_text(fid))] = "{}: field {}".format(
                        _code_name(ret), _fid_text(fid)
                    )
        # Thermal time: 269/270 where the driver has them, else the older 75.
        roles = {k[0] for k in keep}
        if _R_VSW in roles or _R_VHW in roles:
            keep = [k for k in keep if k[0] != _R_VOLD]
        g.fv_keep = [
            (
                role,
                fid,
                vt,
                _G_FAST
                if role in _FAST_ROLES
                else _G_ERRORS
                if role in _MED_ROLES
                else _G_COUNTERS,
            )
            for role, fid, vt in keep
        ]
        for pos, k in enumerate(sorted(g.fv_keep, key=lambda k: k[3])):
            g.role[k[0]] = pos * 7
        why = g.probes.get("nvmlDeviceGetFieldValues", "")

        def gone(col: str, *fids: Any) -> None:
            reasons = [g.probes.get("field {}".format(_fid_text(f)), why) for f in fids]
            g.unsupported[col] = "; ".join(r for r in reasons if r) or why

        if g.role[_R_MEMTEMP] < 0:
            gone("temp_mem_c", FI_MEMORY_TEMP)
        if g.role[_R_VPOW] < 0:
            gone("viol_power_pct", FI_VIOL_POWER)
        if g.role[_R_VSW] < 0 and g.role[_R_VHW] < 0 and g.role[_R_VOLD] < 0:
            gone("viol_thermal_pct", FI_VIOL_SW_THERM, FI_VIOL_THERMAL_OLD)
        if not links:
            for col in ("nvlink_tx_bps", "nvlink_rx_bps"):
                g.unsupported[col] = "NotSupported: no NVLink links (field 91)"
        else:
            if g.role[_R_NVL_TX] < 0:
                gone("nvlink_tx_bps", (FI_NVLINK_TX_KIB, _ALL_LINKS))
            if g.role[_R_NVL_RX] < 0:
                gone("nvlink_rx_bps", (FI_NVLINK_RX_KIB, _ALL_LINKS))
        g.ecc_vol_call = g.role[_R_SBE] < 0 or g.role[_R_DBE] < 0

    def _probe_links(self, g: _Gpu, links: int) -> None:
        """Per-link TX/RX KiB counters (138/139) and speeds (164), scope = link: kept when
        the driver answers any link's counter, else ``links_why`` says why (hello's
        ``links_unsupported``)."""
        ids: List[Tuple[int, int]] = []
        for link in range(links):
            ids += [
                (FI_NVLINK_TX_KIB, link),
                (FI_NVLINK_RX_KIB, link),
                (FI_NVLINK_SPEED_MBPS, link),
            ]
        fv = _fields(g.h, ids)
        if fv is None:
            g.links_why = g.probes.get(
                "nvmlDeviceGetFieldValues", "nvmlDeviceGetFieldValues failed"
            )
            return
        rets = [int(r.nvmlReturn) for r in fv]
        if any(rets[i] == lib.N.NVML_SUCCESS for i in range(len(rets)) if i % 3 != 2):
            g.link_fields = ids
            g.link_cnt = [None] * (2 * links)
            return
        g.links_why = "{}: fields 138/139 per link".format(
            _code_name(rets[0]) if rets else "NotSupported"
        )

    def _probe_gpm(self, g: _Gpu) -> None:
        cols = (
            "sm_active_pct",
            "sm_occupancy_pct",
            "tensor_active_pct",
            "dram_active_pct",
            "fp64_active_pct",
            "fp32_active_pct",
            "fp16_active_pct",
        )
        fn = self._fn("nvmlGpmQueryDeviceSupport")
        reason = ""
        if fn is None:
            reason = "FunctionNotFound: nvmlGpmQueryDeviceSupport (not in this pynvml)"
        else:
            try:
                sup = fn(g.h)
                if not int(sup.isSupportedDevice):
                    reason = "NotSupported: GPM (Hopper and newer only)"
            except lib.N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except (lib.N.NVMLError, AttributeError) as e:
                reason = _reason(e, "nvmlGpmQueryDeviceSupport")
        if not reason:
            try:
                g.gpm_old = lib.N.nvmlGpmSampleAlloc()
                g.gpm_new = lib.N.nvmlGpmSampleAlloc()
                lib.N.nvmlGpmSampleGet(g.h, g.gpm_old)
            except lib.N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except (lib.N.NVMLError, AttributeError) as e:
                reason = _reason(e, "nvmlGpmSampleGet")
        if reason:
            g.probes["gpm"] = reason
            for c in cols:
                g.unsupported[c] = reason
            if g.role[_R_PCIE_TX] < 0:
                g.unsupported["pcie_tx_bps"] = g.probes.get(
                    "field {}".format(FI_PCIE_TX_BYTES), reason
                )
            if g.role[_R_PCIE_RX] < 0:
                g.unsupported["pcie_rx_bps"] = g.probes.get(
                    "field {}".format(FI_PCIE_RX_BYTES), reason
                )
            return
        g.gpm = True
        g.gpm_t = -1.0  # taken at start-up; the first tick's sample is far enough apart
        ids = [GPM_SM_UTIL, GPM_SM_OCCUPANCY, GPM_ANY_TENSOR, GPM_DRAM_BW]
        ids += [GPM_FP64, GPM_FP32, GPM_FP16]
        # PCIe and NVLink throughput from GPM too: it is read every tick anyway, and where it
        # answers them (seen at its first read) the byte-counter fields leave the per-tick
        # field read, the costliest call of a tick.
        ids += [GPM_PCIE_TX, GPM_PCIE_RX]
        if g.nvlink_links:
            ids += [GPM_NVLINK_TX, GPM_NVLINK_RX]
        reqs = []
        for first, second in ((g.gpm_old, g.gpm_new), (g.gpm_new, g.gpm_old)):
            req = lib.N.c_nvmlGpmMetricsGet_t()
            req.version = lib.N.NVML_GPM_METRICS_GET_VERSION
            req.numMetrics = len(ids)
            req.sample1 = first
            req.sample2 = second
            for i, mid in enumerate(ids):
                req.metrics[i].metricId = mid
            reqs.append(req)
        g.gpm_req, g.gpm_req2 = reqs
        g.gpm_flip = True
        g.gpm_ids = ids
        g.gpm_vals = {mid: None for mid in ids}
        g.gpm_struct, g.gpm_offset = _gpm_layout(len(ids))

    def _probe_slow(self, g: _Gpu) -> None:
        cand = [FI_ECC_SBE_AGG, FI_ECC_DBE_AGG]
        if g.nvlink_links:
            cand += [
                FI_NVLINK_CRC_FLIT_TOTAL,
                FI_NVLINK_CRC_DATA_TOTAL,
                FI_NVLINK_REPLAY_TOTAL,
                FI_NVLINK_RECOVERY_TOTAL,
                FI_NVLINK_ECC_DATA_TOTAL,
            ]
        fv = _fields(g.h, cand)
        if fv is not None:
            ok = lib.N.NVML_SUCCESS
            g.slow_fields = [f for f, r in zip(cand, fv) if r.nvmlReturn == ok]  # noqa: B905
        t0 = self._cpu()
        self._slow(g, first=True)
        g.cost["slow"] = self._us(t0)
        if g.remap is None:
            reason = g.probes.get("nvmlDeviceGetRemappedRows", "")
            g.unsupported["remap_pending"] = reason
            g.unsupported["remap_failed"] = reason
        if g.retired_pending is None:
            g.unsupported["retired_pending"] = g.probes.get(
                "nvmlDeviceGetRetiredPagesPendingStatus", ""
            )
        if g.ecc_vol_call and g.ecc_vol[0] is None and g.role[_R_SBE] < 0:
            g.unsupported["ecc_sbe_vol"] = g.probes.get(
                "nvmlDeviceGetTotalEccErrors", g.probes.get("field 3", "")
            )
        if g.ecc_vol_call and g.ecc_vol[1] is None and g.role[_R_DBE] < 0:
            g.unsupported["ecc_dbe_vol"] = g.probes.get(
                "nvmlDeviceGetTotalEccErrors", g.probes.get("field 4", "")
            )

    # ------------------------------------------------------------------ hello, info, check

    def _gpu_hello(self, g: _Gpu) -> Dict[str, Any]:
        info = g.info
        unsupported = dict(g.unsupported)
        if g.lost:
            unsupported = {c: "GpuIsLost" for c in _ROW_ORDER if c != "lost"}
        entry = {
            "index": g.index,
            "uuid": info.get("uuid") or "",
            "name": info.get("name") or "GPU",
            "pci_bus_id": info.get("pci_bus_id") or "",
            "nominal": dict(g.nominal),
            "unsupported": unsupported,
            "serial": info.get("serial"),
            "vbios": info.get("vbios"),
            "arch": info.get("arch"),
            "compute_capability": info.get("compute_capability"),
            "brand": info.get("brand"),
            "persistence_mode": info.get("persistence_mode"),
            "mig_mode": info.get("mig_mode"),
            "virtualization_mode": info.get("virtualization_mode"),
            "ecc_mode": info.get("ecc_mode"),
            "compute_mode": info.get("compute_mode"),
            "gpm": g.gpm,
            "memory_info": "v2" if g.mem_v2 else "v1",
            "probes": dict(g.probes),
            "lost": 1 if g.lost else 0,
            "minor": g.minor,
            "device": gpu_holders.device_path(g.minor, self._dev_dir)
            if g.minor is not None
            else None,
            # What each kind of read cost at start-up (µs of CPU), and which reads GPM
            # replaced: what the CPU plan (hello's cpu_budget) was made from.
            protocol.GPU_COST_KEY: {k: round(v, 1) for k, v in sorted(g.cost.items())},
            "gpm_throughput": sorted(k for k, v in g.gpm_covers.items() if v),
        }
        return protocol_schema.hello_gpu(entry)

    def _where_facts(self) -> Dict[str, Any]:
        """Where the sampler runs, for hello and check: the /proc evidence, and how NVML's
        PIDs of the latest process listing look from here."""
        if self._nvml_pids is None:
            self.procs(self._last_mono)
        return {
            "where": self._where["where"],
            "own_pid_namespace": self._where["own_pid_namespace"],
            "where_evidence": list(self._where["evidence"]),
            "nvml_pids": dict(self._nvml_pids or {}),
        }

    def hello(self) -> Dict[str, Any]:
        gpus = [self._gpu_hello(g) for g in self._gpus]
        for g, out in zip(self._gpus, gpus):  # noqa: B905 - Python 3.8
            if g.links_why is not None:
                out[protocol.LINKS_UNSUPPORTED_KEY] = g.links_why
        by_index = {g["index"]: g for g in gpus}
        gpus.extend(nvml_mig.hello(s, by_index.get(s.parent, {})) for s in self._mig)
        host = dict(self._host)
        host.update(self._where_facts())
        return {"host": host, "gpus": gpus, protocol.CPU_BUDGET_KEY: self.cpu_plan()}

    def info(self) -> Dict[str, Any]:
        host = dict(self._host)
        host.update(self._where_facts())
        return {
            "backend": "nvml",
            "host": host,
            "gpu_count": len(self._gpus),
            "gpus": [self._gpu_hello(g) for g in self._gpus],
        }

    def check(self) -> Dict[str, Any]:
        """Facts for the start-of-rental check; the laptop turns them into verdicts."""
        rows = {r[0]: r for r in self.tick(_monotonic())}
        procs = self.procs(_monotonic())
        pos = protocol.ROW_POS
        gpus: List[Dict[str, Any]] = []
        for g in self._gpus:
            r = rows.get(g.index) or _lost_row(g.index)
            nom = g.nominal
            rm = g.remap
            ecc_mode = g.info.get("ecc_mode")
            mine = [p for p in procs if p["gpu"] == g.index]
            away = [p for p in mine if p.get("mapping") == gpu_holders.MAP_NOT_HERE]
            gpus.append(
                {
                    "index": g.index,
                    "uuid": g.info.get("uuid"),
                    "name": g.info.get("name"),
                    "pci_bus_id": g.info.get("pci_bus_id"),
                    "lost": 1 if g.lost else 0,
                    "persistence_mode": g.info.get("persistence_mode"),
                    "pstate": r[pos["pstate"]],
                    "clock_reasons": r[pos["clock_reasons"]],
                    "util_gpu_pct": r[pos["util_gpu_pct"]],
                    "power_w": r[pos["power_w"]],
                    "power_enforced_w": r[pos["power_limit_w"]],
                    "power_default_w": nom.get("power_default_w"),
                    "power_max_w": nom.get("power_max_w"),
                    "temp_gpu_c": r[pos["temp_gpu_c"]],
                    "temp_mem_c": r[pos["temp_mem_c"]],
                    "temp_slowdown_c": nom.get("temp_slowdown_c"),
                    "temp_shutdown_c": nom.get("temp_shutdown_c"),
                    "temp_mem_max_c": nom.get("temp_mem_max_c"),
                    "sm_clock_mhz": r[pos["sm_clock_mhz"]],
                    "sm_clock_max_mhz": nom.get("sm_clock_max_mhz"),
                    "pcie_gen": r[pos["pcie_gen"]],
                    "pcie_max_gen": nom.get("pcie_max_gen"),
                    "pcie_width": r[pos["pcie_width"]],
                    "pcie_max_width": nom.get("pcie_max_width"),
                    "pcie_replays": r[pos["pcie_replays"]],
                    "nvlink_links": nom.get("nvlink_links"),
                    "nvlink_up": r[pos["nvlink_up"]],
                    "nvlink_errors": g.nvlink_errors,
                    "ecc_mode": None if ecc_mode is None else bool(ecc_mode),
                    "ecc_sbe_vol": r[pos["ecc_sbe_vol"]],
                    "ecc_dbe_vol": r[pos["ecc_dbe_vol"]],
                    "ecc_sbe_agg": g.ecc_agg[0],
                    "ecc_dbe_agg": g.ecc_agg[1],
                    "remapped_rows_correctable": rm[0] if rm else None,
                    "remapped_rows_uncorrectable": rm[1] if rm else None,
                    "remap_pending": rm[2] if rm else None,
                    "remap_failed": rm[3] if rm else None,
                    "retired_pending": g.retired_pending,
                    # Xids are only known while a daemon watches; a one-shot check cannot say.
                    "xid_seen": "unknown",
                    "processes": len(mine),
                    "process_list": mine,
                    "minor": g.minor,
                    "device": gpu_holders.device_path(g.minor, self._dev_dir)
                    if g.minor is not None
                    else None,
                    # NVML entries with no process here: another tenant or the host.
                    "processes_not_here": len(away),
                    "mem_not_here_bytes": sum(p.get("mem_bytes") or 0 for p in away),
                    "mem_total_bytes": nom.get("mem_total_bytes"),
                    "mem_reserved_bytes": nom.get("mem_reserved_bytes"),
                    "mem_used_bytes": r[pos["mem_used_bytes"]],
                    "virtualization_mode": g.info.get("virtualization_mode"),
                    "mig_mode": g.info.get("mig_mode"),
                    "mig_slices": sum(1 for s in self._mig if s.parent == g.index),
                    "compute_mode": g.info.get("compute_mode"),
                    "unsupported": dict(g.unsupported),
                }
            )
        gpus = [protocol_schema.check_gpu(g) for g in gpus]
        host = dict(self._host)
        host.update(self._where_facts())
        return {
            "backend": "nvml",
            "host": host,
            "driver_version": host.get("driver_version"),
            "cuda_version": host.get("cuda_version"),
            "gpu_count": len(gpus),
            "gpus": gpus,
            "events": self.events(_monotonic()),
        }
