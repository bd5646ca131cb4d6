"""One command for a person with an NVIDIA (or ROCm) GPU: verify the CUDA backend.

    python benchmarks/verify_cuda.py [--out neuronperf-verify] [--rounds 20]

Measures naive / fused / compiled RMSNorm under the CUDA backend, saves the traces and
``results.json`` and prints the table and a PASS/FAIL line per check (see verify_device.py).
"""

from __future__ import annotations

import sys

from verify_device import main

if __name__ == "__main__":
    sys.exit(main(backend="cuda"))
