"""Put a recognisable load on the GPU for a device check: busy and idle phases in turn.

Used by ``tools/device_check.sh`` while ``record_nvml_trace.py`` runs, so the recorded trace
holds utilization, power, clock and memory changes and one compute process, not an idle card.
Needs PyTorch with CUDA (present on the device machine); not part of the product.
"""

import argparse
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=180.0)
    ap.add_argument("--busy", type=float, default=20.0, help="seconds of matrix products")
    ap.add_argument("--idle", type=float, default=10.0, help="seconds of rest after each")
    ap.add_argument("--hold-gib", type=float, default=16.0, help="GPU memory kept allocated")
    args = ap.parse_args()

    import torch

    dev = torch.device("cuda")
    hold = torch.empty(int(args.hold_gib * (1 << 30)), dtype=torch.uint8, device=dev)
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device=dev)
    b = torch.randn(8192, 8192, dtype=torch.bfloat16, device=dev)
    end = time.monotonic() + args.seconds
    phase = 0
    while time.monotonic() < end:
        stop = min(end, time.monotonic() + args.busy)
        n = 0
        while time.monotonic() < stop:
            for _ in range(20):
                c = a @ b
            torch.cuda.synchronize()
            n += 20
        print(f"phase {phase}: {n} products", flush=True)
        phase += 1
        time.sleep(max(0.0, min(args.idle, end - time.monotonic())))
    del hold, c
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
