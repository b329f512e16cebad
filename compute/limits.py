"""Limits on the size of a request, estimated before the work starts, settable.

A request too large for the machine (a sweep of a million points, a batch range of a
billion, a table of 10^9 rows) is refused before any memory is spent, with one line that
says the estimate, the limit and how to proceed. Every limit has a default and an
environment variable ``NETMODEL_MAX_<NAME>`` that overrides it (a whole number in the one
number grammar, :data:`compute.validate.NUMBER_PATTERN`: ``1e6`` is read, ``1_000`` refused),
so a user with a bigger machine can lift it.

>>> check("sweep", "searches", 12, 100, "NETMODEL_MAX_SWEEP_SEARCHES", "sweep fewer points")
>>> check("sweep", "searches", 10**6, 100, "NETMODEL_MAX_SWEEP_SEARCHES", "sweep fewer points")
Traceback (most recent call last):
...
compute.errors.UserError: sweep: about 1,000,000 searches, over the limit of 100; sweep fewer points, or raise NETMODEL_MAX_SWEEP_SEARCHES
"""

from __future__ import annotations

import os

from compute.errors import UserError
from compute.validate import describe, read_number

__all__ = ["check", "setting"]


def setting(env: str, default: int, most: int | None = None) -> int:
    """The whole number >= 1 (and at most ``most``) that environment variable ``env`` holds,
    else ``default`` (unset or blank): the one reader of netmodel's whole-number settings
    (``NETMODEL_MAX_*`` here and in :mod:`topologies.limits`, ``NETMODEL_JOBS``), in the one
    number grammar (``'1e6'`` read, ``'1_000'`` refused) and at most 30 characters.

    >>> setting("NETMODEL_EXAMPLE_SETTING", 100)
    100
    >>> import os; os.environ["NETMODEL_EXAMPLE_SETTING"] = "0"
    >>> setting("NETMODEL_EXAMPLE_SETTING", 100)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: environment variable NETMODEL_EXAMPLE_SETTING='0' must be a whole number from 1 to 1e30 (default 100)
    >>> del os.environ["NETMODEL_EXAMPLE_SETTING"]
    """
    text = os.environ.get(env)
    if text is None or not text.strip():
        return default
    value = read_number(f"environment variable {env}", text, whole=True) if len(text) <= 30 \
        else None   # the one number grammar: '1_000' refused, '1e6' read
    top = 10**30 if most is None else most   # 10**30: as the 30 digits typed at most
    if value is None or not 1 <= value <= top:
        # one range for a value below it and one above ('>= 1' was said of 32 nines too)
        bound = "from 1 to 1e30" if most is None else f"from 1 to {most:,}"
        raise UserError(f"environment variable {env}={describe(text)} must be a whole number "
                        f"{bound} (default {default:,})")
    return value


def check(what: str, unit: str, estimate: float, default: int, env: str, how: str) -> None:
    """Refuse ``estimate`` (of ``unit``) above the limit (``default``, or ``env``'s value).

    Parameters
    ----------
    what : str
        The request (``"sweep"``, ``"search"``).
    unit : str
        What is counted (``"searches"``, ``"configurations"``).
    estimate : float
        The work the request would do, counted before doing it.
    default : int
        The limit when ``env`` is not set.
    env : str
        The environment variable that sets the limit.
    how : str
        How to proceed (a smaller request), said in the message.
    """
    limit = setting(env, default)
    if estimate > limit:
        raise UserError(f"{what}: about {int(estimate):,} {unit}, over the limit of {limit:,}; "
                        f"{how}, or raise {env}")
