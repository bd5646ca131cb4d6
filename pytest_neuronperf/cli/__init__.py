"""Command-line tools: neuronperf report | record | compare | history (main dispatches)."""
