"""Reading the data files users write (TOML or JSON) and checking their keys.

One place for the checks every catalog and config loader needs (GPUs, models, calibration,
scenarios): a file that cannot be read, is malformed, has an unknown suffix, or has unknown
or missing keys raises :class:`~compute.errors.UserError` with one line naming the problem.

>>> parse_table('a = 1', "toml", "x.toml")
{'a': 1}
>>> check_keys("x.toml: [fabric]", {"builder": "ring", "colour": 1}, ("builder",), ("gpus",))
Traceback (most recent call last):
...
compute.errors.UserError: x.toml: [fabric]: unknown key(s) colour; allowed: builder, gpus
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from compute.errors import UserError

__all__ = ["check_keys", "parse_table", "read_table", "read_text"]

_FORMATS = {".toml": "toml", ".json": "json"}


def read_text(path, what: str = "file") -> str:
    """The text of ``path``; a missing, unreadable or binary file is a UserError."""
    path = Path(path)
    try:
        return path.read_text()
    except FileNotFoundError:
        raise UserError(f"{what} {str(path)!r} does not exist") from None
    except OSError as exc:
        raise UserError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{what} {str(path)!r} is not a text file") from None


def parse_table(text: str, fmt: str, where: str):
    """Parse TOML or JSON ``text`` (``fmt`` is ``"toml"`` or ``"json"``)."""
    try:
        if fmt == "json":
            return json.loads(text)
        if fmt == "toml":
            return tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{where} is malformed {fmt.upper()}: {exc}") from None
    raise ValueError(f"unknown format {fmt!r}")  # a programming error, not a user's


def read_table(path, what: str = "file", suffixes=(".toml", ".json")):
    """Read and parse a TOML or JSON file, chosen by its suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in suffixes:
        raise UserError(f"{what} {str(path)!r} has unknown file type {suffix!r}; allowed: "
                        f"{', '.join(suffixes)}")
    return parse_table(read_text(path, what), _FORMATS[suffix], str(path))


def check_keys(where: str, table, required, optional=()) -> None:
    """Refuse a table that is not a dict, has keys outside ``required`` + ``optional``, or
    lacks one of ``required``."""
    if not isinstance(table, dict):
        raise UserError(f"{where} must be a table of keys, got {table!r}")
    allowed = (*required, *optional)
    unknown = [k for k in table if k not in allowed]
    if unknown:
        raise UserError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; allowed: "
                        f"{', '.join(allowed)}")
    missing = [k for k in required if k not in table]
    if missing:
        raise UserError(f"{where}: missing key(s) {', '.join(missing)}")
