"""Command-line tools: ``neuronperf report | record | compare | history | export | merge |
merge-baseline``;
main.py dispatches, report.py renders Kineto and Neuron trace reports and rank folders."""
