"""Units of channels: every spelling LSL producers and files use, resolved to an SI factor.

One table for the LSL layer (stream descriptions) and the file readers (XDF meta-data): names
(``microvolts``), symbols (``µV``, ``μV``, ``uV``, ``fT``) and mne-lsl's power-of-ten codes
(``"-6"``, MNE's ``unit_mul``), plus the spellings of "no unit". No LSL here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["NO_UNIT", "UNIT_POWERS", "UNIT_SCALES", "VOLTAGE_TYPES", "Unit", "resolve_unit"]

#: MNE channel types whose data are voltages.
VOLTAGE_TYPES = frozenset({"eeg", "eog", "emg", "ecg", "seeg", "ecog", "dbs", "bio"})

# SI prefixes: power of ten, symbols and name.
_PREFIXES = (
    (3, ("k",), "kilo"),
    (0, ("",), ""),
    (-3, ("m",), "milli"),
    (-6, ("u", "µ", "μ"), "micro"),
    (-9, ("n",), "nano"),
    (-12, ("p",), "pico"),
    (-15, ("f",), "femto"),
)
# Base units whose values MNE keeps in SI: symbol and names.
_BASE_UNITS = (
    ("V", ("volt", "volts")),
    ("T", ("tesla", "teslas")),
    ("T/m", ("tesla/meter", "tesla/metre", "teslas/meter", "teslas/metre")),
)
# mne-lsl (and MNE's ``unit_mul``) declare a unit as the power of ten of its factor: "0", "-6".
UNIT_POWERS = (-15, -12, -9, -6, -3, -2, -1, 0, 1, 2, 3, 6, 9, 12)
# Spellings of "no physical unit" (stim, counter, marker and misc channels).
NO_UNIT = frozenset({"", "n/a", "na", "none", "unitless", "dimensionless", "a.u.", "au"})


_PREFIX_SYMBOLS = {power: "µ" if power == -6 else symbols[0] for power, symbols, _ in _PREFIXES}


def _unit_tables() -> tuple[dict[str, float], dict[str, str]]:
    scales: dict[str, float] = {}
    names: dict[str, str] = {}
    for power, symbols, prefix_name in _PREFIXES:
        for base, base_names in _BASE_UNITS:
            canonical = _PREFIX_SYMBOLS[power] + base
            spellings = [symbol + base for symbol in symbols]
            spellings += [prefix_name + name for name in base_names]
            for spelling in spellings:
                scales[_normalise_unit(spelling)] = 10.0**power
                names[_normalise_unit(spelling)] = canonical
    scales["ft/cm"] = 1e-13  # MEG gradiometers
    names["ft/cm"] = "fT/cm"
    for power in UNIT_POWERS:
        scales[str(power)] = 10.0**power
    return scales, names


def _normalise_unit(unit: str) -> str:
    return re.sub(r"[\s_-]", "", str(unit)).lower()


# Every unit spelling understood (normalised: lower case, no spaces, '-' or '_') → the factor
# turning a value into SI units. Symbols (µV, uV, mV, fT), names (microvolts, micro-volts) and
# power-of-ten codes ("-6"). Symbols are matched case-insensitively: "MV" is read as millivolts.
UNIT_SCALES, _UNIT_NAMES = _unit_tables()


@dataclass(frozen=True)
class Unit:
    """The unit a channel declares, as understood.

    Attributes
    ----------
    declared : str
        The text on the stream (``"microvolts"``, ``"uV"``, ``"-6"``, ``"n/a"``...).
    name : str
        Its canonical symbol (``"µV"``, ``"V"``, ``"fT"``, ``"n/a"``), or the declared text when
        it is unknown.
    scale : float
        The factor turning a value into SI units (1 for an unknown unit).
    known : bool
        Whether the declared text is a unit spelling this module knows.
    """

    declared: str
    name: str
    scale: float
    known: bool


_BASE_OF_TYPE = {**{kind: "V" for kind in VOLTAGE_TYPES}, "mag": "T", "grad": "T/m"}


def resolve_unit(declared: str | None, ch_type: str = "misc") -> Unit:
    """Understand the unit text of one channel.

    Parameters
    ----------
    declared : str | None
        A name (``"microvolts"``), a symbol (``"µV"``, ``"uV"``), an mne-lsl power-of-ten code
        (``"-6"``: the values are in 1e-6 of the SI unit of the channel type) or a spelling of
        "no unit" (``"n/a"``, ``"none"``, ``""``).
    ch_type : str
        The channel's (MNE) type, which names the unit behind a power-of-ten code.
    """
    declared = "" if declared is None else str(declared).strip()
    key = _normalise_unit(declared)
    if key in NO_UNIT:
        return Unit(declared, "n/a", 1.0, True)
    power = _unit_power(declared)
    if power is not None:
        base = _BASE_OF_TYPE.get(ch_type.lower(), "")
        if not base:
            name = "n/a" if power == 0 else f"1e{power}"
        elif power in _PREFIX_SYMBOLS:
            name = _PREFIX_SYMBOLS[power] + base
        else:
            name = f"1e{power} {base}"
        return Unit(declared, name, 10.0**power, True)
    if key in UNIT_SCALES:
        return Unit(declared, _UNIT_NAMES[key], UNIT_SCALES[key], True)
    return Unit(declared, declared, 1.0, False)


def _unit_power(text: str) -> int | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() and int(value) in UNIT_POWERS else None
