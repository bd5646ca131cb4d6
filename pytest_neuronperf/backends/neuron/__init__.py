"""The Neuron backend: live profiling (backend), NeuronConfig (config), the backfill's events
(events), the runtime trace (runtime, explorer), the two device-time sources (sources) and
the offline report's reading of a Neuron profile (offline)."""

from .backend import NeuronBackend

__all__ = ["NeuronBackend"]
