"""Profiler events (live or saved Kineto JSON) and their analysis into measurements."""
