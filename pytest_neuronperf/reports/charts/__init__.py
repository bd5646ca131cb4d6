"""SVG charts of the reports: primitives (svg), roofline, fusion groups, history."""
