"""Hostile input, round 17: the library's lower-layer entry points (netmodel.study and
compute.search, which docs/api.md lists as the wings) took any object for ``slo`` and
``options`` and raised AttributeError, TypeError or numpy's ValueError deep inside
(``'float' object has no attribute 'limit'``); netmodel.api refused them by name, its
wings did not. kv_bytes_per_request took any prompt (NaN gave NaN bytes, -1 a negative
size). Now each refuses in one line naming the parameter."""

from __future__ import annotations

import numpy as np
import pytest

from compute.errors import UserError
from compute.phases import Slo
from compute.roofline_options import RooflineOptions

HOSTILE = [0.05, "x", np.array([1.0, 2.0]), np.array(5), [1.0], Slo, RooflineOptions]


def _calls():
    from compute import evaluate_many, evaluate_one, search
    from netmodel.study import availability, blast_radius, compare, lite_gpu, serving, sweep

    return {
        "compute.search.search": lambda **k: search.search("Llama-3-70B", "H100-SXM", "decode",
                                                           max_batch=8, **k),
        "compute.evaluate_one.evaluate": lambda **k: evaluate_one.evaluate(
            "Llama-3-70B", "H100-SXM", 8, 8, "decode", **k),
        "compute.evaluate_many.evaluate_many": lambda **k: evaluate_many.evaluate_many(
            "Llama-3-70B", "H100-SXM", [8], [8], "decode", **k),
        "serving.serve": lambda **k: serving.serve("Llama-3-70B", "h100-dgx", **k),
        "blast_radius.blast_radius": lambda **k: blast_radius.blast_radius(
            "lite-direct", "Llama-3-70B", "decode", **k),
        "availability.availability": lambda **k: availability.availability(
            "lite-direct", "Llama-3-70B", "decode", trials=10, **k),
        "compare.run_compare": lambda **k: compare.run_compare(
            ["Llama-3-70B"], ["lite-flat"], ["decode"], **k),
        "sweep.run_sweep": lambda **k: sweep.run_sweep(
            ["lite-flat"], ["adjust.hop_latency=0.1us,1us"], ["Llama-3-70B"], ["decode"], **k),
        "lite_gpu.run_lite_gpu_study": lambda **k: lite_gpu.run_lite_gpu_study(
            ["Llama-3-70B"], ["Lite"], ["decode"], **k),
        "lite_gpu.run_full_study": lambda **k: lite_gpu.run_full_study(
            ["Llama-3-70B"], ["Lite"], ["decode"], scenarios=["lite-flat"], sweep=False,
            paper=False, reliability=False, cost=False, crossovers=False, serving=False,
            moe=None, packed=False, **k),
    }


@pytest.mark.parametrize("param", ["slo", "options"])
@pytest.mark.parametrize("where", list(_calls()))
def test_a_wrong_type_for_slo_or_options_is_refused_by_name(where, param):
    call = _calls()[where]
    for value in HOSTILE:
        with pytest.raises(UserError) as err:
            call(**{param: value})
        message = str(err.value)
        assert message.startswith(f"{param} must be a compute.")
        assert "\n" not in message and "or None for the defaults, got " in message


def test_the_defaults_and_real_objects_still_pass():
    from compute import search

    plain = search.search("Llama-3-70B", "H100-SXM", "decode", max_batch=8)
    given = search.search("Llama-3-70B", "H100-SXM", "decode", max_batch=8, slo=Slo(),
                          options=RooflineOptions())
    assert plain.best.batch == given.best.batch == 8
    assert plain.best.latency == given.best.latency


@pytest.mark.parametrize("prompt", [float("nan"), float("inf"), -1, 0, 1.5, "1500", None,
                                    True, 10**400, np.array([1500, 2])],
                         ids=["nan", "inf", "-1", "0", "1.5", "str", "None", "True", "10**400",
                              "array"])
def test_kv_bytes_per_request_refuses_a_prompt_that_is_not_a_token_count(prompt):
    from netmodel.study.serving import kv_bytes_per_request

    with pytest.raises(UserError, match=r"^prompt must be a whole number from 1 to "):
        kv_bytes_per_request("Llama-3-70B", prompt)


def test_kv_bytes_per_request_of_a_valid_prompt():
    from netmodel.study.serving import kv_bytes_per_request

    # 80 layers x 8 KV heads x 128 x (K and V) x 2 bytes x 1500 tokens
    assert kv_bytes_per_request("Llama-3-70B", 1500) == 80 * 8 * 128 * 2 * 2 * 1500
    assert kv_bytes_per_request("Llama-3-70B", np.int64(1500)) == 80 * 8 * 128 * 2 * 2 * 1500


def test_host_power_refuses_an_absurd_host_power_per_h100():
    from compute.hardware import get_gpu
    from netmodel.study.host_bill import host_power

    lite = get_gpu("Lite")
    # the TDP rule: 534 W per H100 x the Lite's 175 W / the H100's 700 W
    assert host_power(lite, 534.0) == 534.0 * 175 / 700
    for bad in (float("nan"), float("inf"), -1, "x", 1 + 1j, np.array([1.0, 2.0]), 10**400):
        with pytest.raises(UserError, match=r"^host_power_per_h100 must be a (finite )?number"):
            host_power(lite, bad)


def test_cost_and_reliability_objects_of_the_wrong_type_are_refused_by_name():
    import netmodel
    from netmodel.study import availability, blast_radius, cost, network_bill

    graph = netmodel.build_fabric("single-switch:n=8")
    cases = [
        ("graph must be a networkx Graph", lambda: network_bill.network_bill(None)),
        ("prices must be a netmodel.study.network_bill.NetworkPrices",
         lambda: network_bill.network_bill(graph, prices=1.0)),
        ("best must be a compute.results.InferenceResult",
         lambda: cost.cost_summary("lite-flat", "Llama-3-70B", "decode", best=1.0)),
        ("cluster must be a netmodel.study.reliability_cluster.Cluster",
         lambda: blast_radius.blast_radius("lite-direct", "Llama-3-70B", cluster="x")),
        ("cluster must be a netmodel.study.reliability_cluster.Cluster",
         lambda: availability.availability("lite-direct", "Llama-3-70B", cluster=0, trials=5)),
        ("catalog_ must be a netmodel.study.reliability_catalog.Catalog",
         lambda: blast_radius.blast_radius("lite-direct", "Llama-3-70B", catalog_=1.0)),
    ]
    for start, call in cases:
        with pytest.raises(UserError) as err:
            call()
        assert str(err.value).startswith(start), str(err.value)


@pytest.mark.parametrize("classes", [1.0, "gpu-die", np.array(5), None])
def test_blast_radius_classes_must_be_a_list(classes):
    from netmodel.study.blast_radius import blast_radius

    if classes is None:   # every class: the table has a row per class of the fabric
        assert len(blast_radius("lite-direct", "Llama-3-70B", classes=["gpu-die"]).rows) >= 1
        return
    with pytest.raises(UserError, match=r"^classes must be a list of component classes"):
        blast_radius("lite-direct", "Llama-3-70B", classes=classes)


@pytest.mark.parametrize("key", ["links", "nodes"])
@pytest.mark.parametrize("bad", [None, 1.0, 5, "gpu1", np.array(5)])
def test_degrade_refuses_failed_parts_that_are_not_a_list(key, bad):
    import netmodel
    from netmodel.collectives.degraded import degrade, degraded_cost

    graph = netmodel.build_fabric("single-switch:n=8")
    for call in (lambda: degrade(graph, **{key: bad}),
                 lambda: degraded_cost(graph, "all-reduce", 1e6, 8, **{key: bad})):
        with pytest.raises(UserError, match=rf"^{key} must be a list of "):
            call()
    # a list still works: GPU 7 failed leaves 7 of the 8
    assert degraded_cost(graph, "all-reduce", 1e6, 8, nodes=["gpu7"]).lost == ("gpu7",)


@pytest.mark.parametrize("address", ["0x10", "true", "tcp://h"])
def test_a_scheduler_address_without_a_port_is_refused_before_any_client(address, monkeypatch):
    """The probe took a missing port as Dask's 8786 and, where something answered there
    ('0x10' is the IPv4 0.0.0.16), dask.Client(address), which takes no default port,
    failed after half-starting: one error line, then a 20 s wait at exit and a traceback."""
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install '.[distributed]')")

    from netmodel.study import distributed as nd

    def no_client(*args, **kwargs):
        raise AssertionError("dask.Client was started")

    monkeypatch.setattr(nd.socket, "create_connection", lambda *a, **k: _Closing())
    monkeypatch.setattr(distributed, "Client", no_client)
    with pytest.raises(UserError, match=r"^cannot reach the Dask scheduler at .*: missing port"):
        nd.Executor(scheduler=address).start()


class _Closing:
    def close(self):
        pass
