"""A GPU's ``die`` table (``[gpu."NAME".die]`` in compute/data/gpus.toml or a GPU file):
its rows, their bounds, and the check that turns a table into :class:`LogicDies`.

compute.hardware checks a die table when it reads the GPU (the catalog, a GPU file), so a
bad table is refused where it is read; compute.yield_model prices the checked dies.
"""

from __future__ import annotations

from dataclasses import dataclass

from compute import validate
from compute.errors import UserError, chosen, known, lookalike
from compute.rows import check_number, economics, parameter, read_rows
from compute.validate import describe

__all__ = ["COVERS_PREFIX", "DIE_ROWS", "HBM", "MAX_DIES", "MAX_HBM_SITES", "MAX_SMS",
           "MAX_WAFER_PRICE", "MEMORY_PRICE_PREFIX", "MIN_DIE_AREA", "OPTIONAL_DIE_ROWS",
           "YIELD_MODELS", "LogicDies", "check_die_table", "check_yield_model",
           "memory_price_of", "process_rows", "wafer_price_of"]

#: Most SMs (or other repeated cores) on one die: compute/data/limits.toml's gpu.sms bound,
#: read from there (said once).
MAX_SMS = int(validate.limits("gpu")["sms"].maximum)

#: Smallest die area taken (m^2): 0.001 mm^2, under the 0.0025 mm^2 of the smallest chips
#: made (Hitachi's 0.05 x 0.05 mm RFID 'powder', 2007, as reported); below it dies per wafer
#: run to astronomical counts (1e-300 mm^2 printed 1e302 dies).
MIN_DIE_AREA = 1e-9
#: Highest wafer price taken (USD): $10M, over 300x a leading-edge wafer's (N2 >= $30,000,
#: economics.toml); --wafer-price 1e308 printed a 300-digit dollar figure.
MAX_WAFER_PRICE = 1e7

#: Defect-yield models of a logic die (:mod:`compute.die_yield`, which computes them; named
#: here, beside the die's other bounds, so that ``netmodel yield --help`` lists them without
#: loading numpy).
YIELD_MODELS = ("poisson", "murphy", "negative-binomial")


def check_yield_model(model: str) -> str:
    """``model`` if it is one of :data:`YIELD_MODELS`, else a UserError.

    >>> check_yield_model("murphy")
    'murphy'
    >>> check_yield_model("gauss")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: unknown yield model 'gauss'; known: 'murphy', 'negative-binomial', 'poisson'
    """
    text = chosen(model, YIELD_MODELS)   # blanks at either end dropped, as every choice's
    if text is None:
        raise UserError(f"unknown yield model {describe(model)}{lookalike(model, YIELD_MODELS)}; "
                        f"known: {known(YIELD_MODELS)}")
    return text


#: Rows of a GPU's ``die`` table (compute/data/gpus.toml, or a GPU file) and their units;
#: all but ``list_price`` and ``memory`` are required.
DIE_ROWS = {"area": "mm^2", "dies": "1", "sms_physical": "1", "sms_enabled": "1",
            "process": "name", "hbm_sites": "1", "packaging": "name", "list_price": "USD",
            "memory": "name"}
#: Die table rows that may be left out (``memory``: HBM when not given).
OPTIONAL_DIE_ROWS = ("list_price", "memory")
#: The confidence tags (compute.rows.CONFIDENCE) under which a ``list_price`` row is an
#: estimate rather than a price read from a seller or a published report.
ESTIMATED = ("read-estimate", "derived", "assumption")
#: The memory kind of a die table without a ``memory`` row: HBM stacks on the interposer,
#: priced as a share of the H100's (compute.yield_model). Any other kind is a board memory
#: priced per GB by economics.toml's ``memory_price_<kind>`` row (:func:`memory_price_of`).
HBM = "HBM"
#: Prefix of economics.toml's per-GB price rows of board memories (``memory_price_gddr6``).
MEMORY_PRICE_PREFIX = "memory_price_"
#: Most logic dies in one package taken (B200: 2; the largest packages announced hold 4).
MAX_DIES = 64
#: Most HBM sites on one package taken (B200: 8; announced designs reach 16).
MAX_HBM_SITES = 1000


@dataclass(frozen=True)
class LogicDies:
    """The logic dies of one GPU's package and what prices them (m^2, USD)."""

    gpu: str
    area: float                #: of one die, m^2
    dies: int                  #: logic dies per package, each tested good before assembly
    sms_physical: int          #: per die
    sms_enabled: int           #: per die
    process: str
    wafer_price: float         #: USD per wafer of the process
    hbm_sites: float | None    #: HBM footprints on the interposer; None: the H100's x HBM share
    packaging: str
    list_price: float | None   #: published purchase price (USD), None where not given
    basis: str                 #: where the data comes from
    #: The memory kind (:data:`HBM`, or a board memory such as GDDR6 priced per GB)
    memory: str = HBM
    #: Whether ``list_price`` is an estimate (its row's confidence is one of
    #: :data:`ESTIMATED`: no price published, e.g. the B300), not a published price
    price_estimated: bool = False

    @property
    def total_area(self) -> float:
        """Logic silicon per package (m^2)."""
        return self.area * self.dies


#: Prefix of the economics.toml name rows that list, space-separated, the process names a
#: wafer price row covers (``processes_of_wafer_price_n3``: the names ``wafer_price_n3``
#: prices).
COVERS_PREFIX = "processes_of_"


def process_rows() -> dict[str, str]:
    """The wafer price row of economics.toml that prices each process name its
    ``processes_of_<row>`` rows list (the reference process always maps to ``wafer_price``).
    A name two rows would price (listed twice, under a row other than its own
    ``wafer_price_<name>``, or the reference process under another row) is refused.

    >>> rows = process_rows()
    >>> rows["N5"], rows["4N"], rows["N3P"], rows["N7"]
    ('wafer_price', 'wafer_price', 'wafer_price_n3', 'wafer_price_n7')
    """
    rows = economics()
    out = {parameter("reference_process"): "wafer_price"}
    for key, row in rows.items():
        if key.startswith(COVERS_PREFIX):
            price = key.removeprefix(COVERS_PREFIX)
            if price not in rows:
                raise UserError(f"compute/data/economics.toml: [{key}] names no row [{price}]")
            for name in row.value.split():
                own = f"wafer_price_{name.lower()}"
                other = out.get(name) or (own if own in rows else price)
                if other != price:
                    raise UserError(f"compute/data/economics.toml: process {name!r} is priced "
                                    f"by both [{other}] and [{price}] (listed in [{key}]); "
                                    f"list it under one")
                out[name] = price
    return out


def wafer_price_of(process: str, where: str) -> float:
    """The wafer price (USD) of ``process``: the row whose ``processes_of_<row>`` list
    names it (:func:`process_rows`; ``wafer_price`` for the reference N4/N5 family), else
    a ``wafer_price_<process>`` row of economics.toml; a name in any case (``n5`` is N5).

    >>> wafer_price_of("N5", "f.toml") == wafer_price_of("N4", "f.toml") == parameter("wafer_price")
    True
    """
    rows = economics()
    covered = process_rows()
    key = covered.get(process.upper(), f"wafer_price_{process.lower()}")
    if key not in rows:
        ok = sorted(set(covered) | {k.removeprefix("wafer_price_").upper() for k in rows
                                    if k.startswith("wafer_price_")})
        raise UserError(f"{where}: process {process!r} has no wafer price"
                        f"{lookalike(process, ok)}; known: {known(ok)} "
                        f"(give one of them, or add a sourced row [{key}] to "
                        f"compute/data/economics.toml)")
    return rows[key].value


def memory_price_of(kind: str, where: str) -> float | None:
    """USD per byte of the memory ``kind`` (economics.toml's ``memory_price_<kind>`` row),
    or None for HBM (priced as a share of the H100's stacks); else a UserError naming the
    kinds known.

    >>> round(memory_price_of("GDDR6", "f.toml") * 2**30, 3), memory_price_of("HBM", "f.toml")
    (3.364, None)
    """
    if kind == HBM:
        return None
    rows = economics()
    key = f"{MEMORY_PRICE_PREFIX}{kind.lower()}"
    if key not in rows:
        ok = [HBM] + sorted(k.removeprefix(MEMORY_PRICE_PREFIX).upper() for k in rows
                            if k.startswith(MEMORY_PRICE_PREFIX))
        raise UserError(f"{where}: memory {kind!r} has no price; known: {known(ok)} (give one "
                        f"of them, or add a sourced row [{key}] to compute/data/economics.toml)")
    return rows[key].value


def check_die_table(gpu: str, table: dict, where: str, sms: int) -> LogicDies:
    """The die table ``table`` of the GPU ``gpu`` (``sms`` enabled SMs), read at ``where``,
    every row checked: its rows and units (:data:`DIE_ROWS`), area at least
    :data:`MIN_DIE_AREA`, whole dies, SMs and HBM sites within their bounds, no more enabled
    SMs than physical ones, dies x enabled SMs equal to ``sms``, a process with a wafer
    price (:func:`wafer_price_of`) and a list price in (0, :data:`MAX_WAFER_PRICE`].
    Whether the die fits the wafer depends on the wafer asked for: checked when priced.

    >>> row = lambda v, u: {"value": v, "unit": u, "source": "s", "ref": "",
    ...                     "confidence": "assumption"}
    >>> t = {"area": row(826, "mm^2"), "dies": row(1, "1"), "sms_physical": row(128, "1"),
    ...      "sms_enabled": row(108, "1"), "process": row("N7", "name"),
    ...      "hbm_sites": row(6, "1"), "packaging": row("CoWoS-S", "name")}
    >>> d = check_die_table("A100", t, "f.toml: GPU 'A100' die", 108)
    >>> round(d.area * 1e6), d.wafer_price, d.list_price
    (826, 9346.0, None)
    >>> check_die_table("A100", t, "f.toml: GPU 'A100' die", 132)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: f.toml: GPU 'A100' die: 1 dies x 108 enabled SMs = 108, but GPU 'A100' has 132 SMs
    """
    rows = read_rows(table, where)
    unknown = sorted(set(rows) - set(DIE_ROWS))
    missing = sorted(set(DIE_ROWS) - set(rows) - set(OPTIONAL_DIE_ROWS))
    if unknown or missing:
        what = (f"unknown row(s) {', '.join(k[:60] for k in unknown)}" if unknown
                else f"lacks row(s) {', '.join(missing)}")
        raise UserError(f"{where} {what}; rows: {', '.join(DIE_ROWS)} "
                        f"({' and '.join(OPTIONAL_DIE_ROWS)} optional)")
    for name, unit in DIE_ROWS.items():
        if name in rows and rows[name].unit != unit:
            raise UserError(f"{where}: [{name}] unit must be {unit!r}, got {rows[name].unit!r}")
    area = check_number(f"{where}: area", rows["area"].value, low=MIN_DIE_AREA)
    for name in ("process", "packaging", "memory"):
        if name in rows:
            validate.name(where, name, rows[name].value)
    # memory kinds and process names are names read in any case (hbm, n3e: HBM, N3E)
    memory = rows["memory"].value.upper() if "memory" in rows else HBM
    process = rows["process"].value.upper()   # TSMC's names: N4, N3E, 4N
    memory_price_of(memory, where)
    whole = {}
    for name, high in (("dies", MAX_DIES), ("sms_physical", MAX_SMS), ("sms_enabled", MAX_SMS),
                       ("hbm_sites", MAX_HBM_SITES)):
        v = rows[name].raw
        lo = 0 if name == "hbm_sites" else 1
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= high:
            raise UserError(f"{where}: [{name}] must be a whole number from {lo} to {high:,}, "
                            f"got {describe(v)}")
        whole[name] = v
    if memory != HBM and whole["hbm_sites"]:
        raise UserError(f"{where}: memory {memory} sits on the board, not on the interposer: "
                        f"[hbm_sites] must be 0, got {whole['hbm_sites']}")
    if whole["sms_enabled"] > whole["sms_physical"]:
        raise UserError(f"{where}: sms_enabled {whole['sms_enabled']} exceeds sms_physical "
                        f"{whole['sms_physical']}")
    if whole["dies"] * whole["sms_enabled"] != sms:
        raise UserError(f"{where}: {whole['dies']} dies x {whole['sms_enabled']} enabled SMs = "
                        f"{whole['dies'] * whole['sms_enabled']}, but GPU {gpu!r} has {sms} SMs")
    price, estimated = None, False
    if "list_price" in rows:
        price = check_number(f"{where}: list_price", rows["list_price"].value, low_open=True,
                             high=MAX_WAFER_PRICE)
        estimated = rows["list_price"].confidence in ESTIMATED
    return LogicDies(gpu=gpu, area=area, dies=whole["dies"], sms_physical=whole["sms_physical"],
                     sms_enabled=whole["sms_enabled"], process=process,
                     wafer_price=wafer_price_of(process, where),
                     hbm_sites=float(whole["hbm_sites"]), packaging=rows["packaging"].value,
                     list_price=price, basis=where, memory=memory, price_estimated=estimated)
