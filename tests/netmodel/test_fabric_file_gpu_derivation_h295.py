"""A fabric built from a spec naming a GPU file whose GPU derives from another
(``derive_from``) and the same fabric saved with ``netmodel topology export`` cost every
collective the same, in separate processes and in one process in either order (h295).

The collective calibration takes its generation constants from the GPU's lineage
(:meth:`~netmodel.collectives.calibration.Calibration.generation_of`): a GPU derived from
B200-HGX is costed with Blackwell's. The lineage was known only to the process that had
read the GPU file, so the saved fabric, read in a fresh process, fell back to the default
generation (Hopper): a TP-2 all-reduce of 4 MiB on rail-optimized:domains=2 took 23.59 us
from the spec and 23.28 us from the file, and in one process the file read first kept
Hopper's constants. The fabric now carries ``gpu_file_facts`` (h298; and a fabric file read
restores them)."""

import os

import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.study.fabric_ref import resolve_fabric
from tests.netmodel.scenario_helpers import run_python

NBYTES = 4 * 2**20
#: One process: the fabric ``argv[1]`` names, its calibration's generation, the TP-2
#: all-reduce time (repr: bit for bit) and whether the file kept its builder (as built).
COST = ("import sys\n"
        "from netmodel.collectives.model import FabricCostModel\n"
        "from netmodel.study.fabric_ref import resolve_fabric\n"
        "g = resolve_fabric(sys.argv[1]).graph\n"
        "m = FabricCostModel(g)\n"
        f"t = m.collective_time('all-reduce', {NBYTES!r}, 2)\n"
        "print(m.calibration.generation, repr(float(t)), g.graph.get('builder'))\n")
#: Then, in that process, ``netmodel ARGS`` (as ``python -m netmodel`` runs it) for each
#: command line of argv[2:] (each one argument, its words split on blanks).
COMMANDS = ("from netmodel.cli.main import main\n"
            "for line in sys.argv[2:]:\n"
            "    try:\n"
            "        main(line.split())\n"
            "    except SystemExit as done:\n"
            "        if done.code not in (None, 0):\n"
            "            raise\n")


def _gpu_file(folder, name: str) -> str:
    (folder / f"{name}.toml").write_text(
        f'[gpu."{name}"]\nderive_from = "B200-HGX"\nfraction = 0.5\nmax_instance = 8\n'
        f'source = "test: half a B200"\n')
    return f"{name}.toml"


def _run(folder, *args: str) -> str:
    return run_python(folder, *args, timeout=120)


def _exports(folder, *pairs: tuple[str, str]) -> None:
    """``netmodel topology export SPEC -o TARGET`` for each pair, in one process."""
    _run(folder, "-c", "import sys\n" + COMMANDS, "",
         *(f"topology export {spec} -o {target}" for spec, target in pairs))


def _cost(ref: str) -> tuple[str, float]:
    m = FabricCostModel(resolve_fabric(ref).graph)
    return m.calibration.generation, float(m.collective_time("all-reduce", NBYTES, 2))


def test_spec_and_saved_file_cost_the_same_in_separate_processes(tmp_path):
    spec = f"rail-optimized:domains=2,gpu={_gpu_file(tmp_path, 'H295HalfB200')}"
    # one process: the spec's cost first (as a fresh process gives it), then both exports
    runs = {spec: _run(tmp_path, "-c", COST + COMMANDS, spec, f"topology export {spec} -o "
                       "fab.json", f"topology export {spec} -o fab.graphml").splitlines()[0]}
    runs |= {ref: _run(tmp_path, "-c", COST, ref) for ref in ("fab.json", "fab.graphml")}
    # Blackwell's constants, as the GPU file's lineage says, and the files kept as built
    assert set(runs.values()) == {runs[spec]}, runs
    generation, seconds, builder = runs[spec].split()
    assert (generation, builder) == ("blackwell", "rail-optimized")
    # the same time as the fabric costed with Blackwell's constants given outright
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        blackwell = FabricCostModel(resolve_fabric(spec).graph,
                                    calibration=default_calibration().for_gpu("B200-HGX"))
        assert float(seconds) == float(blackwell.collective_time("all-reduce", NBYTES, 2))
        hopper = FabricCostModel(resolve_fabric(spec).graph,
                                 calibration=default_calibration().for_gpu("H100-SXM"))
        assert float(seconds) != float(hopper.collective_time("all-reduce", NBYTES, 2))
    finally:
        os.chdir(cwd)


def _one_process_spec(file_first: bool) -> str:
    # a GPU name of its own per order: this process has never read its GPU file
    name = f"H295Half{'FileFirst' if file_first else 'SpecFirst'}"
    return f"rail-optimized:domains=2,gpu={name}.toml"


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    """Both orders' GPU files and their fabrics saved (fab-True.json, fab-False.json), in
    another process, one for both."""
    folder = tmp_path_factory.mktemp("h295")
    for first in (True, False):
        _gpu_file(folder, f"H295Half{'FileFirst' if first else 'SpecFirst'}")
    _exports(folder, *((_one_process_spec(first), f"fab-{first}.json")
                       for first in (True, False)))
    return folder


@pytest.mark.parametrize("file_first", [True, False])
def test_spec_and_saved_file_cost_the_same_in_one_process(one_process, monkeypatch,
                                                          file_first):
    spec = _one_process_spec(file_first)
    monkeypatch.chdir(one_process)
    refs = [f"fab-{file_first}.json", spec] if file_first else [spec, f"fab-{file_first}.json"]
    first, second = (_cost(r) for r in refs)
    assert first == second
    assert first[0] == "blackwell"


def test_ocs_blast_radius_spec_and_saved_file_agree(tmp_path):
    spec = f"ocs:gpus=16,logical=ring,gpu={_gpu_file(tmp_path, 'H295HalfB200Ocs')}"
    # one process: blast-radius of the spec first (its first line), then the export; the
    # saved file's blast-radius in a fresh process
    blast = "blast-radius --fabric {} --model Llama-3-70B"
    heads = [_run(tmp_path, "-c", "import sys\n" + COMMANDS, "", *lines).splitlines()[0]
             for lines in ((blast.format(spec), f"topology export {spec} -o ocs.json"),
                           (blast.format("ocs.json"),))]
    # the first line: '<fabric>@GPU, model: GPUs, TP x batch, instances, tokens/s'
    assert heads[0].split("@", 1)[1] == heads[1].split("@", 1)[1], heads
