"""Hostile round 24 (scripts/hostile_round24.py): engine profiles, calibrate's
measurements, serve's pools of two GPU types and request lengths, topology show's NICs'
worth, collective --scenario on a fabric of shared cables, blast-radius and availability
options, a realized OCS fabric file's cabling record, sweep on Dask.

Found wrong, each checked here:

(a) A realized OCS fabric file's cabling record (graph attribute ``ocs_cabling``) took a
fibre of any length: ``topology compare`` of an 8-GPU ``ocs:...,medium=pluggable-optics``
export with its fibres at ``length = 1e300`` printed a network capex of 3.2e307 M$ (309
digits), where an edge's cable longer than 100 km is refused. Now a fibre's length has the
edge's bound.

(b) The same record took a fibre whose GPU end was a number (``"gpu": [5, ...]``), read as
a GPU outside the graph (a part of a cell carries the whole cell's cabling); every node is
named by text, so such a GPU is named by text too.

(c) ``blast-radius``/``availability --fabric`` of a realized OCS file edited after export
(a fibre 20 m, not 10 m) was refused as holding 'no 'ocs' builder's arguments (graph
attribute 'args')', beside a file that holds them: the reader drops a builder's claim whose
arguments do not build the graph (topologies.registry.check_as_built). Now the refusal says
so.

(d) ``--profile d.toml`` of a folder was refused as ``cannot read profile 'd.toml': it is a
folder, not a file``, naming no flag, where ``--profile d`` named it. Now with the flag (and
calibrate's ``--base`` the same).

(e) A fabric file's ``hop_latency`` (the latency an adjustment added to each of its links)
was taken above its links' latencies, though each link's latency is its as-built one times
``latency_scale`` plus the hop, so at least the hop: lite-direct's export with
``hop_latency = 1.0`` (links of 10 ns) read every cable back as 0 m long, its network capex
504.3 k$ where the file's own is 506.8 k$, exit 0. Now refused naming the link.

(f) ``topology compare`` of a fabric file marked degraded (``degraded: true``) was refused
as ``graph is a degraded fabric ...``: which of the fabrics compared was not said. Now
``fabric 'dg.json' is a degraded fabric ...``, before any fabric is costed.

(g) A GPU file's derived GPU whose clock (``flops_multiplier = 1000``) rated its TDP past a
GPU's most (465 GW) was refused as ``GPU 'A', fraction 1 of 'H100-SXM', flops_multiplier
1000: tdp must be ... got 464625000235.37506; give a larger fraction or multiplier``: the
advice backwards (it was written for a field below a GPU's least) and the file not named.
Now ``g.toml: ...; give a smaller fraction or multiplier``.

(h) ``yield --area 814 --wafer-diameter 1mm`` was refused as ``--area '814': die area 814
mm^2 is larger than the usable wafer (1 mm^2 on a 1 mm wafer)``, naming the area, not the
wafer typed too small; ``yield --gpu g.toml`` of a GPU file without a die table as ``no die
data for GPU 'Mine'``, naming neither the flag nor the file. Now each names what was typed.

(i) calibrate's table ran wide values into the column before: a roofline of 17.99 s (a
GPU file of a hundredth of the NVLink bandwidth at TP 8) and an error of +5895.4% printed
``300ms1.799e+04ms 1.799e+04ms+5895.4%``. Each column now starts after a blank (values of
usual width print as before: docs/compute.md's sample unchanged).

(j) compare's table did the same: h100-dgx with ``[adjust] bandwidth_scale = 2e-5`` (decode
of Llama-3.1-405B at TBT <= 10 s) printed its tokens/s/W and $/Mtok as ``0.0007,016.019``.
Now ``0.000 7,016.019``; values narrower than their column print as before (every generated
docs block unchanged).

(k) infer's stage table the same: Llama-3.1-405B at TP 8 x PP 16 on a GPU file of a
thousandth of the NVLink bandwidth printed its pipeline wait, no memory time then a network
time of 7.274e+04 s, as ``-7.274e+04 s``, a negative time. Now ``- 7.274e+04 s``.

(l) infer said one token as many: ``prompt 1 tokens`` (a prompt of 1), and at an MTP
acceptance of 0 ``step 23.66 ms / 1 tokens`` and ``1 expected tokens a sequence``. Now ``1
token`` (serve's heading says so since 7af46ddd).

(m) ``collective --scenario lite-ocs --placement random --seed 1`` answered ``CUT: the group
is cut apart, no path joins gpu24 and gpu43``: the cost model drew its group by seed 1, the
circuits were set for the instances seed 0 draws (scenario_fabric.instance_graph read no
seed). Now the circuits follow the seed: every seed's group costed as seed 0's is (a ring
of circuits, bidirectional ring 1.324 ms at 64 MiB).

(n) serve with MTP counted every decode step at the drafts' expected tokens however few
were left: DeepSeek-V3 of output 2 (one token to decode) with 3 drafts at 3.44 tokens a step
served 1942 requests/s per decode instance, 3.44x its 564.7. Now a step emits no more than
are left (compute.mtp.mean_steps: the mean steps of a request), its TPOT and rate by them.

(o) A workload file named ``coding`` (its name, or a file coding.toml) of prompt 10 and
output 10 was taken, its heading ``workload coding (prompt 10, output 10 tokens)``: the
shipped workload's name on other figures. Now refused as a profile file of a shipped
profile's name is (compute.config_files.check_not_shipped_name, shared); with the shipped
prompt and output (a rate of its own) it is taken.

(p) serve of one output token (no decode step) took ``--tbt 1ms`` without a word (nor
``--decode-gpu`` or MTP drafts): the TBT line left out, the run as without it. Now a note
(``not_computed``, in the JSON too) says what set for decode is not used.

(q) One said as many: a model of ``max_context`` 1 was refused as past its ``max_context of
1 tokens`` (serve's workload and infer's prompt), ``leaf-spine:leaves=1`` was a ``leaf-spine
of 1 leaves``, and serve's MTP line said ``1 tokens a step`` ((n)). Now ``1 token``, ``1
leaf`` (compute.units.counted takes an irregular plural).

(r) serve's ``--workload nope`` was refused as ``unknown workload 'nope'; ...`` and a folder
or a missing file given as one as ``cannot read workload file 'd.toml': it is a folder`` or
``workload file 'no.toml' does not exist``: no flag named, where ``--profile`` is. Now
``--workload 'nope': ...``.

(s) ``--out out`` of a symbolic link to nothing (``out -> target``) made ``target`` and wrote
there, exit 0, where an output file refuses every link (compute.output_paths). Now refused in
one line, nothing made; a link to an existing folder (scratch space) is taken as before.

(t) The study's summary said of its serving part that ``the KV transfer is at most 0.1% of
a TTFT``, not that its TTFTs are the steps' alone, with no queueing (serve's ``--load`` adds
the mean wait for a prefill batch). Now it says so.

(u) serve's ``--load`` took any load above 0: ``--load 1e-305 --rate 1e9`` sized its pools to
run at that load and died on ``cannot convert float infinity to integer`` (exit 1), and
``--load 1e-300 --rate 1e-9`` printed a count of 2.4e+290 GPUs in 291 digits. Now a load is
from a millionth of the pools' capacity (the wait below it under 1e-6 of a cycle), refused
below in one line.

(v) ``--load 0.999999999`` was said as ``load 1`` (a value refused), and its infeasible
line named as the fastest a configuration whose steps alone miss the SLO, with ``0 ms
waiting for its batch at load 1``: its wait was never computed. Now the load is written to
the digits that keep it below 1, and the fastest is that with its wait (TP 8, batch 64,
2.046e+10 ms waiting).

(w) A whole number of more than 4,300 digits (int()'s limit) typed to a whole option was
refused as not one: ``collective --seed`` of 5,000 nines as ``'999...9' is not a whole
number (a number is ASCII digits ...)``, ``availability --seed`` as ``must be a whole number
>= 0``. Now each says it is a whole number past the largest read (availability's the range
of its seed, 0 to 2**63 - 1).

(x) ``calibrate --base vllm-h100-2024`` of measurements on an A100 kept the base's H100
efficiencies without a word (the profile's ``gpu`` then says A100), where a profile used on
another GPU is noted an extrapolation. Now a note: the base was fitted on H100-SXM, its
kept gemm_efficiency and attention_efficiency are H100-SXM's, carried over.

(y) ``--out o`` of a symbolic link to a file (``o -> f``) was refused as ``Directory 'o' is
a file`` (click's words, of a path that is a link) by every command of an output folder.
Now ``output folder 'o' is a symbolic link to 'f', which exists and is not a folder``.
"""

from __future__ import annotations

import json

import pytest

from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

#: A realized OCS fabric of 8 GPUs whose cabling is of pluggable optics (a fibre a port).
OCS = "ocs:gpus=8,ports=4,ocs_ports=8,logical=ring,medium=pluggable-optics"
MODEL = ["--model", "Llama-3-8B", "--max-batch", "8"]


def _export(tmp_path, edit) -> str:
    """The :data:`OCS` fabric saved as f.json after ``edit(document)``; its path."""
    assert run_cli(["topology", "export", OCS, "-o", tmp_path / "r.json"]).exit_code == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    edit(doc["graph"]["ocs_cabling"]["fibres"])
    (tmp_path / "f.json").write_text(json.dumps(doc))
    return str(tmp_path / "f.json")


def _listing(tmp_path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir())


def test_a_fibre_longer_than_a_cable_is_refused(tmp_path):
    f = _export(tmp_path, lambda fibres: fibres["length"].__setitem__(0, 1e300))
    before = _listing(tmp_path)
    for argv in (["topology", "show", f], ["topology", "compare", f, "ring:n=8"]):
        line = one_line_error(run_cli(argv))
        assert line.endswith(
            "invalid fabric graph: graph attribute 'ocs_cabling' fibre length must be at "
            "most 100000 m (a data-centre cable runs metres to kilometres; 100 km spans a "
            "metro region), got 1e+300"), line
    assert _listing(tmp_path) == before
    # at the bound it is taken, as an edge's
    f = _export(tmp_path, lambda fibres: fibres["length"].__setitem__(0, 1e5))
    assert run_cli(["topology", "show", f]).exit_code == 0


def test_a_fibre_of_a_number_for_its_gpu_is_refused(tmp_path):
    f = _export(tmp_path, lambda fibres: fibres["gpu"].__setitem__(0, 5))
    line = one_line_error(run_cli(["topology", "show", f]))
    assert line.endswith(
        "invalid fabric graph: graph attribute 'ocs_cabling' has a fibre 5-'ocs0'; a fibre "
        "joins a GPU (a node of the graph, or the name of one outside it) to an OCS node of "
        "the graph"), line
    # a GPU outside the graph, by its name, is taken (a part of a cell's whole cabling)
    f = _export(tmp_path, lambda fibres: fibres["gpu"].__setitem__(0, "gpu99"))
    assert run_cli(["topology", "show", f]).exit_code == 0


def test_an_edited_ocs_file_says_its_arguments_do_not_build_it(tmp_path):
    f = _export(tmp_path, lambda fibres: fibres["length"].__setitem__(0, 20.0))
    before = _listing(tmp_path)
    for command in ("blast-radius", "availability"):
        line = one_line_error(run_cli([command, "--fabric", f, *MODEL]))
        assert line == (
            f"error: fabric {f!r} holds OCS circuits but no 'ocs' builder's arguments that "
            f"build it (graph attribute 'args' missing, or the graph edited from what they "
            f"build), so the cabling each instance's circuits are re-set on is not known; "
            f"save it from a spec (netmodel topology export ocs:...,logical=ring)")
    assert _listing(tmp_path) == before
    # as exported it is taken
    assert run_cli(["blast-radius", "--fabric", tmp_path / "r.json", *MODEL]).exit_code == 0


def test_a_profile_folder_named_as_a_file_names_the_flag(tmp_path):
    (tmp_path / "d.toml").mkdir()
    r = run_cli(["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--batch", "4",
                 "--tp", "1", "--profile", "d.toml"], cwd=tmp_path)
    assert one_line_error(r) == ("error: --profile 'd.toml': cannot read profile 'd.toml': "
                                 "it is a folder, not a file")
    (tmp_path / "m.csv").write_text(
        "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
        "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298\n")
    r = run_cli(["calibrate", "--measurements", "m.csv", "-o", "p.toml", "--base", "d.toml",
                 "--fit", "layer_overhead_s"], cwd=tmp_path)
    assert one_line_error(r) == ("error: --base 'd.toml': cannot read profile 'd.toml': it "
                                 "is a folder, not a file")
    assert _listing(tmp_path) == ["d.toml", "m.csv"]


def _lite_direct(tmp_path, name: str, **graph) -> str:
    """lite-direct's fabric exported as ``name``, its graph attributes updated by
    ``graph``; its name."""
    r = run_cli(["topology", "export", "lite-direct", "-o", tmp_path / "x.json"])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "x.json").read_text())
    (tmp_path / "x.json").unlink()
    doc["graph"].update(graph)
    (tmp_path / name).write_text(json.dumps(doc))
    return name


def test_a_hop_latency_above_a_links_latency_is_refused(tmp_path):
    f = _lite_direct(tmp_path, "h.json", hop_latency=1.0)
    before = _listing(tmp_path)
    for argv in (["topology", "show", f], ["topology", "compare", f, "ring:n=8"],
                 ["collective", "all-reduce", "--fabric", f]):
        assert one_line_error(run_cli(argv, cwd=tmp_path)) == (
            "error: h.json: invalid fabric graph: graph attribute 'hop_latency' is 1.0 s but "
            "edge 'gpu0'-'nvs0' has a latency of 1e-08 s; each link's latency is its as-built "
            "one times 'latency_scale' plus the hop, so at least the hop")
    assert _listing(tmp_path) == before
    # a hop of the least link latency is taken (every link adjusted by it)
    f = _lite_direct(tmp_path, "k.json", hop_latency=1e-8)
    assert run_cli(["topology", "show", f], cwd=tmp_path).exit_code == 0


def test_topology_compare_names_the_degraded_fabric(tmp_path):
    f = _lite_direct(tmp_path, "dg.json", degraded=True)
    for argv in (["topology", "compare", "ring:n=8", f], ["topology", "compare", f, "ring:n=8"]):
        assert one_line_error(run_cli(argv, cwd=tmp_path)) == (
            "error: fabric 'dg.json' is a degraded fabric (graph attribute 'degraded': failed "
            "parts taken out), which cannot be priced: its failed parts were bought all the "
            "same; price the healthy fabric it was degraded from")
    assert _listing(tmp_path) == ["dg.json"]


def test_a_derived_gpu_past_a_gpus_most_asks_for_less_and_names_its_file(tmp_path):
    (tmp_path / "g.toml").write_text('[gpu."A"]\nderive_from = "H100-SXM"\n'
                                     'flops_multiplier = 1000\nsource = "s"\n')
    for argv in (["hardware", "--gpu-file", "g.toml"],
                 ["infer", "--model", "Llama-3-8B", "--gpu", "g.toml", "--batch", "1", "--tp",
                  "1"]):
        assert one_line_error(run_cli(argv, cwd=tmp_path)) == (
            "error: g.toml: GPU 'A', fraction 1 of 'H100-SXM', flops_multiplier 1000: tdp must "
            "be a number from 0.1 to 1,000,000 W, got 464625000235.37506; give a smaller "
            "fraction or multiplier")
    # below a GPU's least it still asks for more
    (tmp_path / "g.toml").write_text('[gpu."T"]\nderive_from = "H100-SXM"\n'
                                     'fraction = 0.0001\nsource = "s"\n')
    assert one_line_error(run_cli(["hardware", "--gpu-file", "g.toml"], cwd=tmp_path)) \
        .endswith("got 335000000.0; give a larger fraction")
    assert _listing(tmp_path) == ["g.toml"]


def test_yield_names_the_wafer_and_the_gpu_typed(tmp_path):
    r = run_cli(["yield", "--area", "814", "--wafer-diameter", "1mm"], cwd=tmp_path)
    assert one_line_error(r) == (
        "error: --wafer-diameter '1mm' and --area '814': die area 814 mm^2 is larger than the "
        "usable wafer (1 mm^2 on a 1 mm wafer)")
    (tmp_path / "g.toml").write_text(
        '[gpu."Mine"]\nsms = 132\nbf16_dense_TFLOPs = 989\nfp8_dense_TFLOPs = 1979\n'
        'hbm_capacity_GB = 85.5\nhbm_bandwidth_TBps = 3.35\nscaleup_GBps_per_direction = 450\n'
        'scaleout_Gbps = 400\ntdp_W = 700\nmax_instance = 8\nsource = "test"\n')
    line = one_line_error(run_cli(["yield", "--gpu", "g.toml"], cwd=tmp_path))
    assert line.startswith("error: --gpu 'g.toml': no die data for GPU 'Mine'; dies are known "
                           "for: 'A100-SXM-80GB'"), line
    # without --wafer-diameter the area alone is named, as before
    assert one_line_error(run_cli(["yield", "--area", "80000"])) == (
        "error: --area '80000': die area 80000 mm^2 is larger than the usable wafer (70686 "
        "mm^2 on a 300 mm wafer)")
    assert _listing(tmp_path) == ["g.toml"]


def test_calibrates_table_keeps_a_blank_between_wide_values(tmp_path):
    (tmp_path / "h.toml").write_text('[gpu."Mine"]\nderive_from = "H100-SXM"\n'
                                     'flops_multiplier = 2\nnetwork_bandwidth_multiplier = 0.01\n'
                                     'source = "test"\n')
    (tmp_path / "m.csv").write_text("model,gpu,tp,batch,phase,prompt,context,latency_s\n"
                                    "Llama-3-70B,h.toml,8,8,prefill,2000,,0.3\n")
    r = run_cli(["calibrate", "--measurements", "m.csv", "-o", "p.toml", "--fit",
                 "layer_overhead_s"], cwd=tmp_path)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    # a roofline of 17.99 s (TP 8 over a hundredth of the NVLink bandwidth) and an error of
    # +5895%: each column still after a blank
    assert lines[3] == ("Llama-3-70B TP 8 prefill batch 8 prompt 2000      300ms 1.799e+04ms "
                        "1.799e+04ms +5895.4%"), lines[3]


def test_compares_table_keeps_a_blank_between_wide_values(tmp_path):
    dgx = (ROOT / "netmodel/data/scenarios/h100-dgx.toml").read_text()
    (tmp_path / "s.toml").write_text(dgx.replace('name = "h100-dgx"', 'name = "slow"', 1)
                                     + "\n[adjust]\nbandwidth_scale = 2e-5\n")
    r = run_cli(["compare", "--scenarios", "h100-dgx,s.toml", "--models", "Llama-3.1-405B",
                 "--phases", "decode", "--max-batch", "4096", "--no-plot", "--tbt", "10s"],
                cwd=tmp_path)
    assert r.exit_code == 0, r.output
    slow = next(ln for ln in r.output.splitlines() if ln.startswith("  slow@H100-SXM"))
    # 0.000 tokens/s/W, then $7,017 a million tokens: 0.0007,016.019 before (7,016.019 at
    # a 534 W DGX H100 host, 7,017.435 at 535 W)
    assert slow.endswith("100%    0.000 7,017.435"), slow


def test_infers_stage_table_keeps_a_blank_between_wide_values(tmp_path):
    (tmp_path / "slow.toml").write_text('[gpu."Slow"]\nderive_from = "H100-SXM"\n'
                                        'network_bandwidth_multiplier = 0.001\nsource = "t"\n')
    r = run_cli(["infer", "--model", "Llama-3.1-405B", "--gpu", "slow.toml", "--batch", "4096",
                 "--tp", "8", "--pp", "16", "--phase", "prefill", "--prompt", "8000", "--ttft",
                 "600s"], cwd=tmp_path)
    assert r.exit_code == 0, r.output
    wait = next(ln for ln in r.output.splitlines() if ln.startswith("pipeline_wait"))
    # no memory time, then a network time of 3.83e+04 s (the default scale-up bound's;
    # 7.274e+04 s on NCCL's ring): '-7.274e+04 s' (a negative time) before
    assert wait == ("pipeline_wait     1         0         0        0          -          - "
                    "3.83e+04 s     99.6%  network"), wait


def test_infer_says_one_token_as_one():
    r = run_cli(["infer", "--model", "Mixtral-8x7B", "--gpu", "H100-SXM", "--batch", "1", "--tp",
                 "2", "--phase", "prefill", "--prompt", "1"])
    assert r.output.splitlines()[0].startswith(
        "Mixtral-8x7B on 2 x H100-SXM, prefill, batch 1, prompt 1 token, overlap mode"), r.output
    r = run_cli(["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--batch", "64", "--tp",
                 "8", "--mtp-tokens", "1", "--mtp-acceptance", "0"])
    lines = r.output.splitlines()
    # (23.66 ms on NCCL's ring, 19.9 ms with the default scale-up bound)
    assert lines[1].startswith("TPOT 19.9 ms (step 19.9 ms / 1 token; SLO 50 ms: met)"), lines[1]
    assert any(ln.startswith("MTP: 1 draft token(s) a step, 1 expected token a sequence;")
               for ln in lines), r.output


def test_collective_on_an_ocs_scenario_sets_circuits_for_the_seeds_group():
    for seed, first in (("1", "gpu24, gpu43"), ("3", "gpu23, gpu35")):
        r = run_cli(["collective", "all-reduce", "--scenario", "lite-ocs", "--placement",
                     "random", "--seed", seed])
        assert r.exit_code == 0, r.output
        assert r.output.startswith(f"all-reduce of 64 MiB on 8 GPUs ({first}, "), r.output
        # cut apart before (circuits set for seed 0's instances); as seed 0's now: a ring
        # of circuits among the 8
        assert "CUT" not in r.output, r.output
        assert "alternatives (best protocol each): bidirectional-ring 1.324 ms" in r.output


def test_serve_mtp_emits_no_more_tokens_than_are_left(tmp_path):
    def decode(output: int, *mtp: str) -> dict:
        (tmp_path / "w.toml").write_text(f"prompt = 100\noutput = {output}\n")
        r = run_cli(["serve", "--scenario", "h100-dgx@H200-SXM", "--model", "DeepSeek-V3",
                     "--max-batch", "8", "--workload", "w.toml", *mtp, "--json"], cwd=tmp_path)
        assert r.exit_code == 0, r.output
        d = json.loads(r.output)
        return {**d["decode"], "rate": d["decode_rate_per_s"], "tbt": d["tbt_s"]}

    # output 2: the prefill's token, then one to decode: one step, one token, whatever the
    # drafts (1942 requests/s before: 3.44 tokens a step)
    d = decode(2, "--mtp-tokens", "3")
    assert d["mtp"]["expected_tokens"] == 1.0
    assert d["tbt"] == d["latency_s"]
    assert abs(d["rate"] - d["batch"] / d["latency_s"]) < 1e-9 * d["rate"]
    assert round(d["rate"], 1) == 564.7
    # output 3, one draft accepted half the time: two tokens to decode take one step (both
    # tokens, p 1/2) or two (p 1/2), 1.5 on average: 2 / 1.5 tokens a step
    d = decode(3, "--mtp-tokens", "1", "--mtp-acceptance", "0.5")
    assert abs(d["mtp"]["expected_tokens"] - 4 / 3) < 1e-12
    assert abs(d["rate"] - d["batch"] / (1.5 * d["latency_s"])) < 1e-9 * d["rate"]
    assert abs(d["tbt"] - 0.75 * d["latency_s"]) < 1e-12
    # S(n) = 1 + S(n - 1) / 2 + S(n - 2) / 2, S(0) = 0, S(1) = 1 solves to
    # S(n) = 2n/3 + 2/9 (1 - (-1/2)^n): 4000 tokens to decode take 2666.89 steps, the
    # drafts' 1.5 tokens a step less the last step's cap
    d = decode(4001, "--mtp-tokens", "1", "--mtp-acceptance", "0.5")
    assert abs(d["mtp"]["expected_tokens"] - 4000 / (8000 / 3 + 2 / 9)) < 1e-12
    (tmp_path / "w.toml").write_text("prompt = 100\noutput = 2\n")
    r = run_cli(["serve", "--scenario", "h100-dgx@H200-SXM", "--model", "DeepSeek-V3",
                 "--max-batch", "8", "--workload", "w.toml", "--mtp-tokens", "3"],
                cwd=tmp_path)
    assert "(MTP 3 draft, 1 token a step: TPOT 14.17 ms), 564.7 requests/s per instance" \
        in r.output, r.output


def test_a_workload_file_of_a_shipped_name_and_other_figures_is_refused(tmp_path):
    serve = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--max-batch", "8",
             "--tp-only", "--workload"]
    (tmp_path / "w.toml").write_text('name = "coding"\nprompt = 10\noutput = 10\n')
    (tmp_path / "coding.toml").write_text("prompt = 10\noutput = 10\n")
    (tmp_path / "c.toml").write_text('name = "Coding"\nprompt = 1500\noutput = 13\n')
    tail = ("already names the shipped workload 'coding', whose values differ from this "
            "file's; give yours another name (its figures would be reported as the shipped "
            "workload's)")
    assert one_line_error(run_cli([*serve, "w.toml"], cwd=tmp_path)) == \
        f"error: w.toml: name 'coding' {tail}"
    assert one_line_error(run_cli([*serve, "coding.toml"], cwd=tmp_path)) == \
        f"error: coding.toml: name 'coding' (the file's stem, no name given) {tail}"
    assert one_line_error(run_cli([*serve, "c.toml"], cwd=tmp_path)) == (
        "error: c.toml: name 'Coding' already names the shipped workload 'coding' (case "
        "aside); name it 'coding' as shipped, or give it a name of its own")
    assert _listing(tmp_path) == ["c.toml", "coding.toml", "w.toml"]
    # the shipped prompt and output at a rate of the file's own: taken, as coding at it
    (tmp_path / "w.toml").write_text('name = "coding"\nprompt = 1500\noutput = 13\n'
                                     'rate = 3\n')
    r = run_cli([*serve, "w.toml"], cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("Llama-3-70B on h100-dgx@H100-SXM, workload coding (prompt "
                               "1500, output 13 tokens, 3 requests/s)"), r.output


def test_serve_of_one_output_token_says_its_decode_settings_are_not_used(tmp_path):
    (tmp_path / "w.toml").write_text("prompt = 100\noutput = 1\n")
    r = run_cli(["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--max-batch",
                 "8", "--tp-only", "--workload", "w.toml", "--tbt", "1ms"], cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1] == ("note: decode: one output token, the prefill's: no "
                                         "decode step, so the TBT SLO (1 ms) is not used")
    r = run_cli(["serve", "--scenario", "h100-dgx@H200-SXM", "--model", "DeepSeek-V3",
                 "--max-batch", "8", "--workload", "w.toml", "--decode-gpu", "H100-SXM",
                 "--mtp-tokens", "2", "--json"], cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["settings"]["not_computed"] == {"decode": (
        "one output token, the prefill's: no decode step, so the TBT SLO (50 ms), the decode "
        "GPU and the MTP drafts are not used")}
    # with a decode step: no such note
    (tmp_path / "w.toml").write_text("prompt = 100\noutput = 2\n")
    r = run_cli(["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--max-batch",
                 "8", "--tp-only", "--workload", "w.toml", "--tbt", "1s"], cwd=tmp_path)
    assert r.exit_code == 0 and "note:" not in r.output, r.output


def test_one_is_said_as_one_in_max_context_and_leaves(tmp_path):
    (tmp_path / "config.json").write_text(
        '{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, '
        '"intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, '
        '"num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 1}')
    (tmp_path / "w.toml").write_text("prompt = 1\noutput = 2\n")
    assert one_line_error(run_cli(["serve", "--scenario", "h100-dgx", "--model", "config.json",
                                   "--workload", "w.toml", "--max-batch", "4", "--tp-only"],
                                  cwd=tmp_path)).endswith(
        "workload 'w': prompt 1 + output 2 tokens is a context of 3, past config's max_context "
        "of 1 token; allowed: prompt + output up to 1 (a shorter workload, or a model file "
        "with a larger max_context)")
    assert one_line_error(run_cli(["infer", "--model", "config.json", "--gpu", "H100-SXM",
                                   "--batch", "1", "--tp", "1", "--phase", "prefill",
                                   "--prompt", "2"], cwd=tmp_path)) == (
        "error: --prompt '2': prefill with a prompt of 2 tokens exceeds config's max_context "
        "of 1 token; use a shorter prompt, or a model file with a larger max_context")
    r = run_cli(["topology", "show", "leaf-spine:leaves=1,radix=4"])
    assert r.output.startswith("fabric:      leaf-spine of 1 leaf x 2 H100-SXM"), r.output
    r = run_cli(["topology", "show", "leaf-spine:leaves=2,radix=4"])
    assert r.output.startswith("fabric:      leaf-spine of 2 leaves x 2 H100-SXM"), r.output


def test_serve_names_the_workload_flag(tmp_path):
    (tmp_path / "d.toml").mkdir()
    serve = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--workload"]
    assert one_line_error(run_cli([*serve, "nope"], cwd=tmp_path)) == (
        "error: --workload 'nope': unknown workload 'nope'; known: 'coding', 'conversation', "
        "or a .toml/.json file with prompt, output (and rate)")
    assert one_line_error(run_cli([*serve, "d.toml"], cwd=tmp_path)) == (
        "error: --workload 'd.toml': cannot read workload file 'd.toml': it is a folder, not a "
        "file")
    assert one_line_error(run_cli([*serve, "no.toml"], cwd=tmp_path)) == (
        "error: --workload 'no.toml': workload file 'no.toml' does not exist")
    assert _listing(tmp_path) == ["d.toml"]


def test_an_out_folder_of_a_dangling_link_is_refused(tmp_path):
    (tmp_path / "out").symlink_to("target")
    avail = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q",
             "--no-plot", "--max-batch", "8", "--trials", "5", "--out", "out"]
    assert one_line_error(run_cli(avail, cwd=tmp_path)) == (
        "error: --out 'out': output folder 'out' is a symbolic link to 'target', which does "
        "not exist; netmodel would create that folder where the link points: create it "
        "first, give the target's own path, or remove the link")
    assert _listing(tmp_path) == ["out"] and not (tmp_path / "target").exists()
    # to an existing folder: written there
    (tmp_path / "target").mkdir()
    r = run_cli(avail, cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert "availability.json" in {p.name for p in (tmp_path / "target").iterdir()}


def test_the_studys_serving_summary_says_its_ttft_has_no_queueing():
    from types import SimpleNamespace

    from netmodel.study.summary_serving import serving_section

    row = {"model": "m", "workload": "coding", "scenario": "base@H", "feasible": True,
           "transfer_visible_s": 9e-4, "ttft_s": 0.9, "prompt": 1500, "output": 13,
           "vs_baseline": 1.0, "decode_gpus_per_prefill_gpu": 0.1}
    done = [SimpleNamespace(workload=SimpleNamespace(load=None))]
    part = SimpleNamespace(rows=lambda: [row], baseline="base@H", results=done)
    assert serving_section(part)[-2].endswith(
        "the KV transfer is at most 0.1% of a TTFT (of the steps, with no queueing).")
    # a library caller's workload at a load: its TTFTs hold the wait
    done[0].workload.load = 0.5
    assert serving_section(part)[-2].endswith(
        "the KV transfer is at most 0.1% of a TTFT (with the mean wait for a prefill batch).")


SERVE70 = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--max-batch", "64",
           "--tp-only"]


def test_a_load_below_a_millionth_is_refused(tmp_path):
    r = run_cli([*SERVE70, "--load", "1e-305", "--rate", "1e9"])
    assert one_line_error(r) == (
        "error: --load '1e-305': workload 'coding': load must be a number from 1e-06 to 1, 1 "
        "excluded (a fraction of the pools' capacity), got 1e-305")
    (tmp_path / "w.toml").write_text("prompt = 10\noutput = 10\nload = 1e-7\n")
    r = run_cli([*SERVE70, "--workload", "w.toml"], cwd=tmp_path)
    assert one_line_error(r).startswith("error: w.toml: workload 'w': load must be a number "
                                        "from 1e-06 to 1"), r.output
    # the least load at the most rate: a count of 15 digits, not past a float
    r = run_cli([*SERVE70, "--load", "1e-6", "--rate", "1e9"])
    assert r.exit_code == 3 and isinstance(r.exception, SystemExit), r.output
    assert "load 1e-06)" in r.output and "GPUs serve 1e+09 requests/s" in r.output


def test_a_load_near_1_is_not_said_as_1_and_its_fastest_waits():
    import re

    r = run_cli([*SERVE70, "--load", "0.999999999"])
    assert r.exit_code == 3, r.output
    assert "(prompt 1500, output 13 tokens, load 0.999999999)" in r.output
    m = re.search(r"the fastest \(TP (\d+), batch (\d+)\) takes ([0-9.e+]+) ms "
                  r"\(([0-9.e+]+) ms of transfer, ([0-9.e+]+) ms waiting for its batch at "
                  r"load 0.999999999, ([0-9.e+]+) ms for a decode slot and ([0-9.e+]+) ms to "
                  r"its step\)", r.output)
    assert m, r.output
    # bulk service at rho = 1 - 1e-9: at least 1 / (2 B (1 - rho)) cycles, 7.8e6 at B 64
    assert float(m[5]) > 7.8e6 * 1 and float(m[3]) >= float(m[5])


def test_a_whole_number_of_too_many_digits_is_said_so():
    nines = "9" * 5000
    shown = "'" + "9" * 39 + "..." + "9" * 16 + "'"
    r = run_cli(["collective", "all-reduce", "--scenario", "lite-ocs", "--placement", "random",
                 "--seed", nines])
    assert one_line_error(r) == (
        f"error: Invalid value for '--seed': {shown} is a whole number of more than 4,300 "
        f"digits, past the largest netmodel reads (see 'netmodel collective --help')")
    r = run_cli(["collective", "all-reduce", "--fabric", "ring:n=8", "--seed",
                 "1e1000000000000000000"])
    assert "is a whole number of more than 4,300 digits" in one_line_error(r)
    r = run_cli(["collective", "all-reduce", "--fabric", "ring:n=8", "--seed", "1.5"])
    assert "'1.5' is not a whole number" in one_line_error(r)
    r = run_cli(["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q",
                 "--no-plot", "--trials", "5", "--seed", nines])
    assert one_line_error(r) == f"error: --seed {shown} must be a whole number from 0 to 2**63 - 1"


def test_calibrate_notes_a_base_profile_of_another_gpu(tmp_path):
    rows = ("model,gpu,tp,batch,phase,prompt,context,latency_s\n"
            "Llama-2-70B,G,8,1,prefill,2048,,0.2\nLlama-2-70B,G,8,1,decode,,576,0.04\n"
            "Llama-2-70B,G,8,32,decode,,576,0.05\n")
    (tmp_path / "a.csv").write_text(rows.replace(",G,", ",A100-SXM-80GB,"))
    (tmp_path / "h.csv").write_text(rows.replace(",G,", ",H100-SXM,"))
    fit = ["calibrate", "--fit", "layer_overhead_s", "--base", "vllm-h100-2024"]
    note = ("note: the base profile 'vllm-h100-2024' was fitted on GPU H100-SXM; these "
            "measurements are of A100-SXM-80GB: its gemm_efficiency, attention_efficiency "
            "(kept, not fitted) are H100-SXM's, carried over, not measured on A100-SXM-80GB")
    r = run_cli([*fit, "--measurements", "a.csv", "-o", "a.toml"], cwd=tmp_path)
    assert r.exit_code == 0 and r.output.splitlines()[1] == note, r.output
    r = run_cli([*fit, "--measurements", "h.csv", "-o", "h.toml"], cwd=tmp_path)
    assert r.exit_code == 0 and "note:" not in r.output, r.output
    r = run_cli([*fit[:3], "--measurements", "a.csv", "-o", "n.toml"], cwd=tmp_path)
    assert r.exit_code == 0 and "note:" not in r.output, r.output   # no base: the roofline's


@pytest.mark.parametrize("command", [
    ["study", "lite-gpu"],
    ["compare", "--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--no-plot"],
    ["sweep", "--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--no-plot", "--param",
     "cost.pue=1.1,1.2"],
    ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--no-plot"],
    ["blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--no-plot"]])
def test_an_out_folder_of_a_link_to_a_file_is_said_so(tmp_path, command):
    (tmp_path / "f").write_text("mine")
    (tmp_path / "o").symlink_to("f")
    name = " ".join(command[:2]) if command[0] == "study" else command[0]
    r = run_cli([*command, "--out", "o"], cwd=tmp_path)
    assert one_line_error(r) == (
        f"error: Invalid value for '--out': output folder 'o' is a symbolic link to 'f', which "
        f"exists and is not a folder; give a folder path (see 'netmodel {name} --help')")
    assert _listing(tmp_path) == ["f", "o"] and (tmp_path / "f").read_text() == "mine"
