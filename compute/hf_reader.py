"""A HuggingFace ``config.json`` being read: :class:`ConfigReader` finds each figure through
:data:`~compute.hf_families.HF_ALIASES` and checks its type and range, naming the config key
in any error; :func:`architectures` reads the ``architectures`` list. The readers of
:mod:`compute.hf_config` and its parts (:mod:`compute.hf_model_type`,
:mod:`compute.hf_windows`, :mod:`compute.hf_experts`, :mod:`compute.hf_layouts`) take one.

>>> c = ConfigReader({"n_layer": 2, "num_hidden_layers": None}, "cfg")
>>> c.key("layers"), c.count("layers"), c.count("kv_heads", default=4)
('n_layer', 2, 4)
"""

from __future__ import annotations

from typing import Any

from compute import validate
from compute.errors import UserError
from compute.hf_families import HF_ALIASES

__all__ = ["ConfigReader", "architectures"]


class ConfigReader:
    """A config.json being read: :meth:`key`, :meth:`count`, :meth:`flag` and :meth:`raw`
    take a field of :data:`HF_ALIASES` and follow its keys; the values read are checked
    for type and range, naming the config key in any error."""

    def __init__(self, cfg: dict, where: str):
        self.cfg, self.where = cfg, where

    def key(self, field: str) -> str | None:
        return next((k for k in HF_ALIASES[field] if self.cfg.get(k) is not None), None)

    def has(self, field: str) -> bool:
        return self.key(field) is not None

    def raw(self, field: str) -> Any:
        k = self.key(field)
        return None if k is None else self.cfg[k]

    def count(self, field: str, *, limit: str | None = None, default: int | None = None,
              minimum: int | None = None) -> int:
        """An integer from the config, checked against the range of ``limit`` (default
        ``field``) in limits.toml; ``default`` when absent (required when it is None)."""
        k = self.key(field)
        if k is None and default is not None:
            return default
        if k is None:   # a required key written null: its range refuses it ('got null')
            k = next((k for k in HF_ALIASES[field] if k in self.cfg), None)
            if k is None:
                keys = " or ".join(map(repr, HF_ALIASES[field]))
                raise UserError(f"{self.where}: config.json lacks {keys}")
        r = validate.limits("model")[limit or field]
        lo = r.minimum if minimum is None else minimum
        return validate.number(self.where, k, self.cfg[k], minimum=lo, maximum=r.maximum,
                               integer=True)

    def flag(self, field: str, default: bool) -> bool:
        k = self.key(field)
        return default if k is None else validate.flag(self.where, k, self.cfg[k])

    def option(self, key: str, default: bool | None) -> bool | None:
        """The true/false config key ``key`` itself (no aliases), checked; ``default`` when
        absent or null."""
        v = self.cfg.get(key)
        return default if v is None else validate.flag(self.where, key, v)

    def text(self, key: str, default: str = "") -> str:
        v = self.cfg.get(key)
        return default if v is None else validate.string(self.where, key, v, max_length=200)


def architectures(c: ConfigReader) -> list[str]:
    """The config's ``architectures``: HuggingFace writes a list of class names; any other
    shape (a bare string, numbers, nested lists, a table) is refused naming the key, since the
    family of a model type of its own is read from its first entry."""
    arch = c.cfg.get("architectures")
    if arch is None:
        return []
    if not isinstance(arch, list) or not all(isinstance(a, str) for a in arch):
        raise UserError(f"{c.where}: architectures must be a list of class names (strings, "
                        f"e.g. [\"LlamaForCausalLM\"]), got {validate.describe(arch)}")
    return arch
