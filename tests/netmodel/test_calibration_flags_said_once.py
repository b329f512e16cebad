"""A calibration's true-or-false values are checked by one helper,
:func:`compute.validate.flag`, wherever they are read: a calibration file's ``[p2p]`` rules,
a generations file's ``[[release.until]]`` rule and the :class:`Calibration` itself. Each
refusal names its file and table; ``[p2p].pxn`` was refused by the Calibration's own check
as a bare ``pxn`` (its table unnamed), where ``[p2p].net_ll_buffers`` named it."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.collectives.calibration import (
    DEFAULTS_PATH,
    GENERATIONS_PATH,
    Calibration,
    Protocol,
)
from netmodel.collectives.calibration_files import load_calibration, load_releases


@pytest.mark.parametrize("old, new, said", [
    ("pxn = true", "pxn = 1", "1"),
    ("net_ll_buffers = false", 'net_ll_buffers = "no"', "'no'"),
    ("ll_per_channel = true", "ll_per_channel = 1.0", "1.0")])
def test_a_calibration_files_rules_are_refused_with_their_table(tmp_path, old, new, said):
    f = tmp_path / "cal.toml"
    text = DEFAULTS_PATH.read_text()
    assert text.count(old) == 1
    f.write_text(text.replace(old, new))
    key = new.split(" = ")[0]
    with pytest.raises(UserError) as err:
        load_calibration(f)
    assert str(err.value) == f"{f}: [p2p].{key} must be true or false, got {said}"


def test_a_releases_rule_is_refused_with_its_entry(tmp_path):
    f = tmp_path / "gen.toml"
    old = "p2p_ll_per_channel = false"
    text = GENERATIONS_PATH.read_text()
    assert text.count(old) == 1
    f.write_text(text.replace(old, "p2p_ll_per_channel = 0"))
    with pytest.raises(UserError) as err:
        load_releases(f)
    assert str(err.value) == (f"{f}: [release].until[0].p2p_ll_per_channel must be true or "
                              f"false, got 0")


@pytest.mark.parametrize("key", ["pxn", "p2p_net_ll_buffers", "p2p_ll_per_channel",
                                 "ll128_enabled"])
def test_the_calibrations_own_flags(key):
    p = Protocol("Simple", 1.0, 0.0, 0.0, 0.0)
    with pytest.raises(UserError) as err:
        Calibration(protocols=(p,), in_network=p, **{key: "yes"})
    assert str(err.value) == f"{key} must be true or false, got 'yes'"
    assert getattr(Calibration(protocols=(p,), in_network=p, **{key: False}), key) is False
