"""Command-line tools: ``neuronperf report | record | compare | history``; main.py
dispatches, report.py renders Kineto and Neuron trace reports."""
