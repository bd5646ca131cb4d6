"""One command for a Trainium / Inferentia user: verify the Neuron backend on hardware.

    python benchmarks/verify_neuron.py [--out neuronperf-verify] [--rounds 20]

Needs the native TorchNeuron backend (Neuron SDK 2.33+, torch-neuronx 2.13.3.x or later).
It checks what pytest_neuronperf/neuron_adapter.py assumes and could not test without a
device: that ``NeuronConfig(correlate_device_time=True)`` yields PrivateUse1 device events
linked to their ops (``raw_profile.events_by_device_type`` / ``linked_events`` in
results.json), that our device time matches ``key_averages()``'s self device time, that the
device kind reads ``neuron:<family>:<n>nc``, and that a saved trace reads back offline.
Please send back the whole output folder (results.json, traces/) with the printed log.
"""

from __future__ import annotations

import sys

from verify_device import main

if __name__ == "__main__":
    sys.exit(main(backend="neuron"))
