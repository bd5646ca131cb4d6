"""benchmarks/verify_neuron.py where there is no Neuron device: it fails clearly.

What this stands on: this machine (no torch-neuronx, no Neuron device). On Trainium the
script is the check of everything the Neuron tests here could only take from the docs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_neuronperf.backends import NeuronBackend

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "verify_neuron.py"


@pytest.mark.slow
@pytest.mark.skipif(NeuronBackend().unavailable_reason() is None, reason="a Neuron device is here")
def test_without_torch_neuronx_it_fails_clearly_and_writes_results(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("verify_neuron: FAIL: backend 'neuron' is unavailable: ")
    assert "torch-neuronx is not installed" in line and "torch-neuronx 2.14.3" in line
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert "torch-neuronx is not installed" in results["error"]
