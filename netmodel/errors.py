"""netmodel's user-error type (defined in compute, the package every other one may import)."""

from compute.errors import UserError, known

__all__ = ["UserError", "known"]
