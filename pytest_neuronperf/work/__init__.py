"""Work of a region: FLOP/byte counting, device peaks, CPU calibration."""
