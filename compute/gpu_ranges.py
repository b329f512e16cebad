"""The ranges a GPU's figures are held to: a GPU file's spec keys with their
:class:`~compute.hardware.GpuSpec` fields and SI factors (:data:`SPEC_KEYS`), each field's
range in SI (:func:`spec_ranges`, from ``compute/data/limits.toml``), and the most a
narrower format's dense peak may be over a wider one's (:func:`check_peaks`). A GpuSpec is
checked against them (:mod:`compute.hardware`), and so is a GPU in a saved fabric
(:mod:`topologies.schema_gpu`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from compute import validate
from compute.errors import UserError

__all__ = ["PEAK_RATIO_MAX", "SPEC_KEYS", "check_peaks", "spec_ranges"]


#: A GPU file's keys -> (GpuSpec field, factor to SI): read by the GPU-file reader and by
#: a saved fabric's range check (topologies.schema), the same keys as limits.toml's [gpu].
SPEC_KEYS = {
    "sms": ("sms", 1),
    "bf16_dense_TFLOPs": ("flops_bf16", 1e12),
    "fp8_dense_TFLOPs": ("flops_fp8", 1e12),
    "int8_dense_TOPs": ("flops_int8", 1e12),
    "fp4_dense_TFLOPs": ("flops_fp4", 1e12),
    "hbm_capacity_GB": ("hbm_capacity", 1e9),
    "hbm_bandwidth_TBps": ("hbm_bandwidth", 1e12),
    "scaleup_GBps_per_direction": ("scaleup_bandwidth", 1e9),
    "scaleout_Gbps": ("scaleout_bandwidth", 1e9 / 8),
    "tdp_W": ("tdp", 1),
    "max_instance": ("max_instance", 1),
    "nvlinks": ("nvlinks", 1),
}


#: A GPU file's unit (``compute/data/limits.toml``) -> the SI unit of a GpuSpec field.
_SI_UNITS = {"TFLOP/s": "FLOP/s", "TOP/s": "operations/s", "GB": "bytes", "TB/s": "bytes/s",
             "GB/s": "bytes/s", "Gb/s": "bytes/s", "W": "W", "": ""}


@cache
def spec_ranges() -> dict[str, tuple[float, float, bool, bool, str]]:
    """Each numeric GpuSpec field -> ``(minimum, maximum, integer, or_zero, SI unit)``: its
    GPU-file key's range in ``compute/data/limits.toml``, scaled to SI as the GPU-file
    reader scales the key's value (a GpuSpec is held to it, and so is a GPU in a saved
    fabric, :func:`topologies.schema_gpu.gpu_spec_from_dict`).

    >>> spec_ranges()["scaleout_bandwidth"]
    (125000.0, 1250000000000000.0, False, True, 'bytes/s')
    """
    ranges = validate.limits("gpu")
    return {name: (ranges[key].minimum * factor, ranges[key].maximum * factor,
                   ranges[key].integer, ranges[key].or_zero, _SI_UNITS[ranges[key].unit])
            for key, (name, factor) in SPEC_KEYS.items()}


#: The most a narrower format's dense peak may be over the wider one it is checked against
#: (fp8 and int8 against bf16; fp4 against fp8, or bf16 where there is no fp8, two steps
#: down: 4 x this): a tensor core's multiplier area grows as the square of the mantissa bits
#: (bf16 8, fp8 e4m3 4, fp4 e2m1 2), so the same silicon gives at most 4x a step (16x bf16
#: to fp4), and 8x leaves twice that for units built for the narrow format alone (int8, whose products need no exponent logic, is held to the
#: same bound: H100 2x, B300 0.07x). The catalog's largest ratio is 3x (GB300-NVL72's fp4 over
#: its fp8), an outside part's 2x (MI355X, H20); a peak typed in the wrong unit (GOPS as
#: TOPS: 1000x) or with a digit too many is refused.
PEAK_RATIO_MAX = 8.0


def check_peaks(here: str, flops: Mapping[str, float]) -> None:
    """Refuse a dense peak (``flops`` by dtype, FLOP/s) more than :data:`PEAK_RATIO_MAX`
    times the wider format's it is checked against (4x that for fp4 over bf16, two steps
    down, where there is no fp8); 0 (no such tensor cores) passes.

    >>> check_peaks("GPU 'X'", {"bf16": 148e12, "fp8": 29600e12, "int8": 0, "fp4": 0})
    Traceback (most recent call last):
    ...
    compute.errors.UserError: GPU 'X': its fp8 dense peak (29,600 TFLOP/s) is 200x its bf16 peak (148 TFLOP/s); an fp8 peak is at most 8x the bf16 one's (multiplier area ~ mantissa bits squared): a unit slip or a digit too many?
    """
    fp8 = flops.get("fp8", 0) > 0
    # (the wider format, the bound): fp4 over bf16 is two 4x steps of mantissa area
    wider = {"fp8": ("bf16", PEAK_RATIO_MAX), "int8": ("bf16", PEAK_RATIO_MAX),
             "fp4": ("fp8", PEAK_RATIO_MAX) if fp8 else ("bf16", 4 * PEAK_RATIO_MAX)}
    for narrow, (wide, most) in wider.items():
        v, w = flops.get(narrow, 0), flops.get(wide, 0)
        if v > 0 and w > 0 and v > most * w:
            unit = "TOP/s" if narrow == "int8" else "TFLOP/s"
            raise UserError(f"{here}: its {narrow} dense peak ({v / 1e12:,.6g} {unit}) is "
                            f"{round(v / w, 1):,g}x its {wide} peak ({w / 1e12:,.6g} TFLOP/s); an "
                            f"{narrow} peak is at most {most:g}x the {wide} one's (multiplier "
                            f"area ~ mantissa bits squared): a unit slip "
                            f"or a digit too many?")
