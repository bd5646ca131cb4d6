"""Taking a measurement: the runner, host-time window, reference ticks, settling."""
