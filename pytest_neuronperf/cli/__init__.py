"""Command-line tools: ``neuronperf report | record | compare | history | export | merge``;
main.py dispatches, report.py renders Kineto and Neuron trace reports and rank folders."""
