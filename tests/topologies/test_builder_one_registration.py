"""A builder is registered once: its name and module in ``BUILDERS`` of
``topologies/builder_names.py``. ``topologies.specs`` loads the modules named there, so a
builder in a new module needed no import added to ``topologies/specs.py`` beside the name
(two lists that had to agree); and a builder defined in another module than the one named
is refused where it registers, so the table cannot name the wrong module."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from topologies import specs
from topologies.builder_names import BUILDERS, NAMES
from topologies.registry import REGISTRY, builder

ROOT = Path(__file__).resolve().parents[2]

#: a builder in a module of its own, outside the package's folder: a hypercube of 2**d GPUs
HYPERCUBE = '''
import numpy as np
from topologies.direct import _direct
from topologies.registry import builder


@builder("hypercube")
def hypercube(d: int = 3, gpu: str = "H100-SXM"):
    n = 2 ** d
    i = np.repeat(np.arange(n), d)
    j = i ^ np.tile(1 << np.arange(d), n)
    keep = i < j
    return _direct(f"hypercube of {n}", n, (i[keep], j[keep], np.ones(keep.sum(), int)), d,
                   gpu, None, "copper", 2.0)
'''

#: the one registration: BUILDERS gains 'hypercube' (module 'hypercube'); a finder serves
#: topologies.hypercube from the file above, as a file in topologies/ would be found
LOAD = '''
import importlib.abc, importlib.util, sys, types
m = types.ModuleType("topologies.builder_names")
m.BUILDERS = {{**{builders!r}, "hypercube": "hypercube"}}
m.NAMES = tuple(m.BUILDERS)
sys.modules[m.__name__] = m

class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "topologies.hypercube":
            return importlib.util.spec_from_file_location(name, {path!r})
        return None

sys.meta_path.insert(0, Finder())
import topologies
g = topologies.build("hypercube:d=4")
print(g.graph["gpus"], g.degree("gpu0"), sorted(g.neighbors("gpu0")), g.graph["spec"])
'''


def test_every_module_named_is_loaded_and_each_name_registered_there():
    # the package's own table: every name registered, by the module it names
    assert set(REGISTRY) >= set(NAMES) and tuple(BUILDERS) == NAMES
    for name, module in BUILDERS.items():
        assert specs.get_builder(name).__module__ == f"topologies.{module}", name


def test_a_new_module_needs_only_its_entry(tmp_path):
    # 16 GPUs, each cabled to its 4 neighbours differing in one bit (1, 2, 4, 8)
    mod = tmp_path / "hypercube.py"
    mod.write_text(textwrap.dedent(HYPERCUBE))
    code = LOAD.format(path=str(mod), builders=BUILDERS)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "16 4 ['gpu1', 'gpu2', 'gpu4', 'gpu8'] hypercube:d=4"


def test_a_builder_defined_elsewhere_than_its_module_is_refused():
    # 'ring' is named in BUILDERS with module 'direct'; this test module is not it
    def ring_here(n: int = 4):  # pragma: no cover - refused before it could run
        raise AssertionError

    registered = REGISTRY["ring"]
    with pytest.raises(ValueError, match=r"^builder 'ring' is defined in \S+, but BUILDERS of "
                                         r"topologies/builder_names\.py names topologies\.direct, "
                                         r"the module topologies\.specs loads: name its module "
                                         r"there$"):
        builder("ring")(ring_here)
    assert REGISTRY["ring"] is registered
