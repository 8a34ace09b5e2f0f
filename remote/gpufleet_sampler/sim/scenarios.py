"""The named scenarios of the simulator: a fleet of one GPU model, its jobs on a timeline
(each backed by one real process), and at most one fault.

Python 3.8, stdlib only.
"""

from typing import Any, Dict, Optional, Sequence, Tuple

from gpufleet_sampler.sim.gpus import A100_40, A100_80, GIB, H100, MIB, RTX4090, GpuModel

# ecc-xid's double-bit error: a job runs a while on its bad link before the GPU fails (long
# enough for a 30 min window to show the slow all-reduce first and the crash after it).
ECC_XID_DBE_S = 1260.0


class JobSpec(object):
    """A workload on some GPUs between two scenario times, backed by one real process."""

    def __init__(
        self,
        key: str,
        argv: Sequence[str],
        gpus: Sequence[int],
        mem_bytes: int,
        util: float = 98.0,
        intensity: float = 0.88,
        kind: str = "train",
        start_s: float = 0.0,
        end_s: Optional[float] = None,
        script: Optional[str] = None,
    ) -> None:
        self.key = key
        # argv[0] is what the process table shows; argv[1] (when ``script`` is set) is a file
        # of that name in the sim's temp dir. Without ``script`` the code comes on stdin and
        # the command line is argv[0] alone.
        self.argv = list(argv)
        self.gpus = tuple(gpus)
        self.mem_bytes = mem_bytes  # per GPU
        self.util = util
        self.intensity = intensity
        self.kind = kind  # train (all-reduce bursts, checkpoints) | infer | miner
        self.start_s = start_s
        self.end_s = end_s
        self.script = script


class Scenario(object):
    """A named fleet, its jobs and its fault."""

    def __init__(
        self,
        name: str,
        description: str,
        model: GpuModel,
        n_gpus: int,
        jobs: Sequence[JobSpec],
        power_enforced_w: Optional[float] = None,
        thermal_fault: Optional[Tuple[int, float, float]] = None,
        ecc_fault: Optional[Tuple[int, float, float]] = None,
        link_down: Optional[Tuple[int, int]] = None,
    ) -> None:
        self.name = name
        self.description = description
        self.model = model
        self.n_gpus = n_gpus
        self.jobs = tuple(jobs)
        self.power_enforced_w = power_enforced_w
        # (gpu, start_s, thermal resistance after the fault in °C/W)
        self.thermal_fault = thermal_fault
        # (gpu, time of the double-bit error and pending remap, time of the Xid 79)
        self.ecc_fault = ecc_fault
        # (gpu, link): one NVLink link down from the start (a bad cable/NVSwitch port)
        self.link_down = link_down


def _train(gpus: Sequence[int], mem_bytes: int, argv: Sequence[str], **kw: Any) -> JobSpec:
    return JobSpec("train", argv, gpus, mem_bytes, script="train.py", **kw)


SCENARIOS: Dict[str, Scenario] = {
    "healthy-8xa100": Scenario(
        "healthy-8xa100",
        "8× A100 SXM 80GB, a data-parallel training run: steady load, NVLink all-reduce "
        "bursts every step, a checkpoint over PCIe every 10 min",
        A100_80,
        8,
        [
            _train(
                range(8),
                71 * GIB,
                ["python", "train.py", "--model", "llama-7b", "--lr", "3e-4", "--bs", "32"],
                intensity=0.86,
            )
        ],
    ),
    "thermal-throttle-h100": Scenario(
        "thermal-throttle-h100",
        "8× H100 SXM; GPU 5's airflow is blocked 10 s in: its temperature climbs past slowdown "
        "(~20 s later), its clocks drop and the thermal reason bits are set",
        H100,
        8,
        [
            _train(
                range(8),
                74 * GIB,
                ["python", "train.py", "--model", "mixtral-8x7b", "--fsdp", "--bf16"],
                intensity=0.92,
            )
        ],
        thermal_fault=(5, 10.0, 0.13),
    ),
    "power-capped-4090": Scenario(
        "power-capped-4090",
        "2× RTX 4090 whose provider enforces 300 W against the 450 W default: the power_cap "
        "bit is set and clocks sit well under boost (GeForce: no HBM temperature, ECC, NVLink "
        "or GPM)",
        RTX4090,
        2,
        [
            JobSpec(
                "infer0",
                ["python", "serve.py", "--model", "sdxl", "--port", "7860"],
                [0],
                19 * GIB,
                util=96.0,
                intensity=0.9,
                kind="infer",
                script="serve.py",
            ),
            JobSpec(
                "infer1",
                ["python", "serve.py", "--model", "sdxl", "--port", "7861"],
                [1],
                19 * GIB,
                util=96.0,
                intensity=0.9,
                kind="infer",
                script="serve.py",
            ),
        ],
        power_enforced_w=300.0,
    ),
    "crashed-idle": Scenario(
        "crashed-idle",
        "4× A100 SXM 80GB; the training job dies 3 min in: utilization and memory fall to "
        "near zero, its process disappears, the instance idles (and costs) on",
        A100_80,
        4,
        [
            _train(
                range(4),
                68 * GIB,
                ["python", "train.py", "--config", "configs/sweep-17.yaml"],
                end_s=180.0,
            )
        ],
    ),
    "foreign-process": Scenario(
        "foreign-process",
        "4× A100 SXM 40GB running an evaluation; 60 s in, an unknown process ('xmrig') "
        "appears on GPU 3 and takes memory and SM from it",
        A100_40,
        4,
        [
            JobSpec(
                "eval",
                [
                    "python",
                    "eval.py",
                    "--ckpt",
                    "runs/llama/step-12000",
                    "--hf-token=hf_DemoTokenNotARealOne1234",
                ],
                range(4),
                31 * GIB,
                util=97.0,
                intensity=0.8,
                kind="infer",
                script="eval.py",
            ),
            JobSpec(
                "xmrig",
                ["./xmrig"],
                [3],
                2400 * MIB,
                util=70.0,
                intensity=0.95,
                kind="miner",
                start_s=60.0,
            ),
        ],
    ),
    "ecc-xid": Scenario(
        "ecc-xid",
        "4× A100 SXM 80GB; GPU 1 has NVLink link 5 down from the start: the job trains "
        "degraded, every all-reduce at 11/12 of the bandwidth, GPU 1's traffic squeezed onto "
        "its other 11 links; GPU 2 logs corrected ECC errors, then 21 min in a double-bit "
        "error (Xid 48) leaves a row remapping pending, and 15 s later it falls off the bus "
        "(Xid 79): it is lost, the job dies and the instance idles on, billed",
        A100_80,
        4,
        [
            _train(
                range(4),
                70 * GIB,
                ["python", "train.py", "--model", "gpt-neox-20b"],
                end_s=ECC_XID_DBE_S + 18.0,
            )
        ],
        ecc_fault=(2, ECC_XID_DBE_S, ECC_XID_DBE_S + 15.0),
        link_down=(1, 5),
    ),
}
