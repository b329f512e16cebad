"""topologies.registry.builders() reads the registry once per state of it."""

import topologies.registry as registry
from topologies import specs  # noqa: F401  (the builders registered)


def test_builders_answer_is_the_fresh_one_and_callers_cannot_spoil_it():
    first = registry.builders()
    names = [b.name for b in first]
    first.clear()                                   # a caller's list is its own
    again = registry.builders()
    assert [b.name for b in again] == names
    registry._BUILDERS_SEEN = None                  # forget: read it afresh
    assert registry.builders() == again


def test_a_builder_replaced_in_the_registry_is_seen(monkeypatch):
    name = registry.builders()[0].name
    before = registry.builders()[0]

    def replacement(gpus: int = 3) -> None:
        """A stand-in builder. Second sentence."""

    monkeypatch.setitem(registry.REGISTRY, name, replacement)
    info = next(b for b in registry.builders() if b.name == name)
    assert info.function is replacement and info.summary == "A stand-in builder."
    assert [p.name for p in info.params] == ["gpus"] and info.params[0].default == 3
    monkeypatch.undo()
    assert next(b for b in registry.builders() if b.name == name) == before


def test_signatures_are_read_once_while_the_registry_stands(monkeypatch):
    reads = []
    real = registry._signature
    monkeypatch.setattr(registry, "_signature", lambda fn: reads.append(fn) or real(fn))
    monkeypatch.setattr(registry, "_BUILDERS_SEEN", None)
    registry.builders()
    registry.builders()
    assert len(reads) == len(registry.REGISTRY)     # twice as many before the cache
