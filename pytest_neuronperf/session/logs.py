"""torch's structured-trace records kept out of pytest's log capture.

torch logs its compile trace (for tlparse) on ``torch.__trace``: always at DEBUG, with an
empty message, and only while that logger has a handler. pytest (9.2) attaches its capture
handlers to every non-propagating logger, so a failing compiled test's "Captured log call"
fills with hundreds of empty ``DEBUG torch.__trace`` lines, and ``caplog.records`` with
their records. A filter on pytest's handlers drops them there alone: torch's own trace
handler (``TORCH_TRACE``) still gets every record. See docs/reports.md, "Captured logs".
"""

from __future__ import annotations

import logging

import pytest

TRACE_LOGGER = "torch.__trace"
# The LoggingPlugin's handlers: what caplog, the report sections, --log-file and live
# logging read.
_HANDLERS = ("caplog_handler", "report_handler", "log_file_handler", "log_cli_handler")


class WithoutTorchTrace(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == TRACE_LOGGER or record.name.startswith(TRACE_LOGGER + "."))


def keep_torch_trace_out(config: pytest.Config) -> None:
    """Add the filter to each of pytest's log handlers (none when logging is off)."""
    plugin = config.pluginmanager.get_plugin("logging-plugin")
    for attr in _HANDLERS:
        handler = getattr(plugin, attr, None)
        if isinstance(handler, logging.Handler) and not any(
            isinstance(f, WithoutTorchTrace) for f in handler.filters
        ):
            handler.addFilter(WithoutTorchTrace())
