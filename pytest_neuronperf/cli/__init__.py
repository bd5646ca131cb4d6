"""Command-line tools: neuronperf report | record."""
