"""The error the measuring API raises when it is misused.

This module's one job is ``MeasureError``: the runner, the warm-up and the fixture raise
it for a call the measuring API cannot honour (a callable inside a region, a lazy result,
a bad round count), as opposed to a failure of the measured code. It lives on its own so
that every module of this room can raise it without importing the runner.
"""

from __future__ import annotations

from ..errors import NeuronPerfError


class MeasureError(NeuronPerfError, RuntimeError):
    """Misuse of the measuring API (not a failure of the measured code)."""
