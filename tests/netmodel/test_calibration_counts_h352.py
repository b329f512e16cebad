"""Every count of a calibration refused by one check, naming the parameter, the value and
the range (h352).

A calibration's channel and peer counts were checked as ``count in least..1024`` in three
places: ``Calibration`` (its six counts, the value shown by ``repr``: a 51-digit integer
in full), a generations file's ``in_network_channels`` and ``_pow2_up`` (the channel count
that sets ``p2p_net_channels``), each with its own copy of the rule."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.collectives.calibration import DEFAULTS_PATH, GENERATIONS_PATH, WARP_SIZE, Calibration
from netmodel.collectives.calibration_files import load_calibration, load_generations

#: Calibration's counts and the least each takes (0: none of them, e.g. no NVLS channels)
COUNTS = {"channels": 1, "in_network_channels": 0, "p2p_channels_per_peer": 1,
          "p2p_channels_per_net_peer": 1, "p2p_net_channels": 0, "p2p_peers_per_batch": 1,
          "p2p_threads": 0, "ll_ring_threads": 0, "ring_channels": 0}
#: the counts of threads, taken in whole warps (tests/netmodel/test_calibration_warps_h523.py)
WARPS = ("p2p_threads", "ll_ring_threads")

#: values no count takes, each as the message shows it
BAD = [(float("nan"), "nan"), (-1, "-1"), (-(10 ** 50), "a negative integer of 51 digits"),
       (1025, "1025"), (10 ** 50, "an integer of 51 digits"), (True, "True"),
       (False, "False"), (2.0, "2.0"), (16.0, "16.0"), (2.5, "2.5"), (float("inf"), "inf"),
       ("4", "'4'"), (None, "None"), ([4], "[4]")]


@pytest.mark.parametrize("key", COUNTS)
@pytest.mark.parametrize(("value", "shown"), BAD, ids=[shown for _, shown in BAD])
def test_a_calibration_refuses_a_count_that_is_no_whole_number_in_range(key, value, shown):
    with pytest.raises(UserError) as err:
        Calibration.ideal().with_(**{key: value})
    assert str(err.value) == f"{key} must be a whole number in {COUNTS[key]}..1024, got {shown}"


@pytest.mark.parametrize("key", [k for k, least in COUNTS.items() if least == 1])
def test_zero_is_below_the_counts_that_start_at_one(key):
    with pytest.raises(UserError, match=rf"^{key} must be a whole number in 1\.\.1024, got 0$"):
        Calibration.ideal().with_(**{key: 0})


@given(st.sampled_from(sorted(COUNTS)), st.integers(-2000, 2000))
def test_a_count_is_taken_exactly_when_in_its_range(key, value):
    inside = COUNTS[key] <= value <= 1024 and (key not in WARPS or value % WARP_SIZE == 0)
    try:
        cal = Calibration.ideal().with_(**{key: value})
    except UserError:
        assert not inside
    else:
        assert inside and getattr(cal, key) == value


def _file(tmp_path, path, old, new):
    text = path.read_text()
    assert text.count(old) == 1
    out = tmp_path / path.name
    out.write_text(text.replace(old, new))
    return out


@pytest.mark.parametrize(("value", "shown"), [("nan", "nan"), ("-1", "-1"), ("0", "0"),
                                              ("1025", "1025"), ("true", "True"),
                                              ("2.0", "2.0"), ('"4"', "'4'")])
def test_a_generations_files_in_network_channels(tmp_path, value, shown):
    path = tmp_path / "gens.toml"
    path.write_text(f'default = "x"\n[generation.x]\n'
                    f"in_network_channels = {value}\n")
    with pytest.raises(UserError) as err:
        load_generations(path)
    assert str(err.value) == (f"{path}: [generation.x].in_network_channels must be a whole "
                              f"number in 1..1024, got {shown}")


def test_the_shipped_generations_take_their_in_network_channels():
    gens, _ = load_generations(GENERATIONS_PATH)
    assert all(1 <= g.in_network_channels <= 1024 for g in gens
               if g.in_network_channels is not None)


@pytest.mark.parametrize(("value", "shown"), [("0", "0"), ("24.0", "24.0"), ("true", "True")])
def test_a_generations_files_ring_channels(tmp_path, value, shown):
    path = tmp_path / "gens.toml"
    path.write_text(f'default = "x"\n[generation.x]\n'
                    f"ring_channels = {value}\n")
    with pytest.raises(UserError) as err:
        load_generations(path)
    assert str(err.value) == (f"{path}: [generation.x].ring_channels must be a whole "
                              f"number in 1..1024, got {shown}")


@pytest.mark.parametrize(("old", "new", "key", "least", "shown"), [
    # channels also sets p2p_net_channels (its power of two up), which passes a bad one on
    ("channels = 16", "channels = 16.0", "channels", 1, "16.0"),
    ("channels = 16", "channels = nan", "channels", 1, "nan"),
    ("channels = 16", "channels = true", "channels", 1, "True"),
    ("channels = 16", "channels = -16", "channels", 1, "-16"),
    ("channels_per_peer = 32", "channels_per_peer = 32.0", "p2p_channels_per_peer", 1,
     "32.0"),
    ("channels_per_net_peer = 2", "channels_per_net_peer = 0", "p2p_channels_per_net_peer", 1,
     "0"),
    ("peers_per_batch = 8", "peers_per_batch = 2048", "p2p_peers_per_batch", 1, "2048"),
    ("peers_per_batch = 8", "peers_per_batch = 8\nnet_channels = -1", "p2p_net_channels", 0,
     "-1"),
    ("threads = 640", "threads = 640.0", "p2p_threads", 0, "640.0"),
    ("ll_ring_threads = 512", "ll_ring_threads = 2048", "ll_ring_threads", 0, "2048"),
])
def test_a_calibration_files_counts_are_named_with_the_file(tmp_path, old, new, key, least,
                                                             shown):
    path = _file(tmp_path, DEFAULTS_PATH, old, new)
    with pytest.raises(UserError) as err:
        load_calibration(path)
    assert str(err.value) == f"{path}: {key} must be a whole number in {least}..1024, got {shown}"


def test_the_channel_count_sets_the_p2p_net_channels_as_a_power_of_two(tmp_path):
    """NCCL's p2pnChannels is its channel count rounded up to a power of two (pow2Up)."""
    for channels, net in ((16, 16), (12, 16), (1, 1), (1024, 1024), (513, 1024)):
        path = _file(tmp_path, DEFAULTS_PATH, "channels = 16", f"channels = {channels}")
        assert load_calibration(path).p2p_net_channels == net
