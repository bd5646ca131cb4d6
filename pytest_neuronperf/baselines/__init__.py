"""Stored baselines: entries, the file store, updates."""
