"""The one exception type for user mistakes.

Every bad input that a user can fix (an unknown name, an impossible parameter, a malformed
file, a NaN or negative size) raises :class:`UserError` with a message that names the bad
value and says what is allowed. The command line prints that message as one line on stderr
and exits with status 2; it never shows a traceback for a ``UserError``.

It lives in ``compute`` because ``compute`` is the package every other one may import;
``netmodel.errors`` and ``topologies`` re-export it.
"""

from __future__ import annotations

__all__ = ["UserError", "known"]


class UserError(ValueError):
    """A mistake in what the user asked for; the message is shown to them as is."""


def known(names) -> str:
    """Format a list of allowed names for an error message: ``'a', 'b', 'c'``."""
    return ", ".join(repr(n) for n in sorted(names))
