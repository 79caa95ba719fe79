"""Units: one Pint registry per process, read at the edge; values carry SI base magnitudes inside.

Pint parses a unit text once (cached); from then on a `Value` is a magnitude in SI base units
(exact `Fraction` where the input was exact, `float` otherwise), a dimension vector and the unit
text it is shown in. Arithmetic on that triple is a few integer operations, so thousands of checks
cost milliseconds; Pint's own Quantity arithmetic is 10-50x slower and never runs on the hot path.

Policies (see docs/quantity.md, "Units"):
- Money: `USD` is its own base dimension `[currency]` (aliases `dollar`, `dollars`, `$` in front of
  a number); `cent` = 0.01 USD. Other currencies are not defined.
- Counting words (eggs, apples, people, …) are not units: a count is dimensionless. A few generic
  counting units are defined as dimensionless factors: `item`, `piece` (= 1), `pair` (= 2),
  `dozen` (= 12), `gross` (= 144). Pint's own `count` is dimensionless too.
- `percent` / `%` is the dimensionless factor 1/100: "25%" is the number 1/4.
- Temperatures: an offset unit (degC, degF) is an *absolute* temperature and is converted to kelvin
  where it is read (a given or a claim). Arithmetic then runs on kelvin, so `t2 - t1` is a
  temperature difference in K; claim a difference in `K` or `delta_degC`, not in `degC` (a claim
  "10 degC" means 283.15 K). Inside a compound unit Pint reads degC as a difference: 3 degC/s
  is 3 K/s.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from prosfi.quant.errors import QuantError

# The dimension vector's axes, in order. Pint's base dimensions plus the one we add for money.
DIM_NAMES = ("[length]", "[mass]", "[time]", "[temperature]", "[current]", "[substance]",
             "[luminosity]", "[currency]")
BASE_UNITS = ("m", "kg", "s", "K", "A", "mol", "cd", "USD")
DIMENSIONLESS: tuple = (0,) * len(DIM_NAMES)

MAX_UNIT_CHARS = 64
MAX_QUANTITY_CHARS = 200
MAX_LITERAL_DIGITS = 100  # significant digits in one number (literal, given or claim)
MAX_DECIMAL_EXPONENT = 400  # |e| in 1.5e400
MAX_UNIT_EXPONENT = 12  # |n| in m**n

_DEFINITIONS = (
    "USD = [currency] = _ = dollar",
    "cent = 0.01 * USD = _ = cents",
    "item = 1 = _ = items",
    "piece = 1 = _ = pieces",
    "pair = 2 = _ = pairs",
    "dozen = 12 = _ = dozens",
    "gross = 144",
)

_lock = threading.Lock()
_registry: Any = None


def registry():
    """The process's one Pint UnitRegistry (exact Fraction factors), built on first use (~0.3 s)."""
    global _registry
    if _registry is None:
        with _lock:
            if _registry is None:
                import pint

                reg = pint.UnitRegistry(non_int_type=Fraction, autoconvert_offset_to_baseunit=False)
                for line in _DEFINITIONS:
                    reg.define(line)
                _format_fractions(reg)
                _registry = reg
    return _registry


def _format_fractions(reg) -> None:
    """Let the registry's formatters print exact (Fraction) magnitudes.

    The registry keeps factors exact, so Quantities from `Value.to_pint()` (and whatever they are converted
    to) carry Fractions, and Python 3.11's `Fraction.__format__` refuses float specs: `f"{q:.3f~P}"` raised
    a TypeError inside Pint. The formatter reads a Fraction as a float for a number spec and as
    `format_number` text (`2.5`, not `5/2`) for none; every other magnitude is passed through unchanged.
    """
    formatters = getattr(getattr(reg, "formatter", None), "_formatters", None)
    for sub in (formatters.values() if isinstance(formatters, Mapping) else ()):
        original = getattr(sub, "format_magnitude", None)
        if original is None:
            continue

        def format_magnitude(magnitude, mspec="", *args, _original=original, **kwargs):
            if isinstance(magnitude, Fraction):
                if not mspec:
                    return format_number(magnitude)
                magnitude = float(magnitude)
            return _original(magnitude, mspec, *args, **kwargs)

        sub.format_magnitude = format_magnitude


# ---------------------------------------------------------------------------------------- units
@dataclass(frozen=True)
class UnitInfo:
    """A parsed unit: base = magnitude * scale + offset (offset only for degC/degF alone)."""

    text: str  # the unit as written (normalised), shown back to users
    scale: Fraction | float
    offset: Fraction
    dims: tuple

    @property
    def dimensionless(self) -> bool:
        return self.dims == DIMENSIONLESS


_NORMALISE = (("°C", "degC"), ("℃", "degC"), ("°F", "degF"), ("℉", "degF"), ("Ω", "ohm"), ("Ω", "ohm"),
              ("²", "**2"), ("³", "**3"), ("·", "*"), ("⋅", "*"), ("−", "-"), ("µ", "u"), ("μ", "u"))
_UNIT_CHARS = re.compile(r"[A-Za-z_ */^().0-9%-]*")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
_EXPONENT = re.compile(r"(?:\*\*|\^)\s*\(?\s*-?\s*$")
_CHAINED = re.compile(r"(?:\*\*|\^)\s*\(?\s*-?\s*\d+(?:\.\d+)?\s*\)?\s*(?:\*\*|\^)")
_DIMENSIONLESS_WORDS = {"", "1", "dimensionless", "none", "count", "counts"}
_RECIPROCAL = re.compile(r"1\s*/")
_USD_SPELLINGS = re.compile(r"\$|(?<![A-Za-z])usd(?![A-Za-z])", re.IGNORECASE)  # a step's unit "$", "usd", "$/h"


def normalise_unit_text(text: str) -> str:
    """Unicode spellings to Pint's (`°C`, `Ω`, `²`, the micro sign and Greek mu, both code points, as `u`), the
    dollar written `$` or `usd` (GSM8K's notation in a step's unit) as `USD`, and a rate written with a bare
    slash (`/ h`, as in the claim `15 / h`) as a reciprocal (`1/h`)."""
    t = text.strip()
    for a, b in _NORMALISE:
        t = t.replace(a, b)
    t = _USD_SPELLINGS.sub("USD", t)
    if t.startswith("/"):
        t = "1/" + t[1:].strip()
    return _MONEY_UNITS.get(t.lower(), t)


# a step's unit written the way people write money (the claim `{"value": 18, "unit": "$"}`)
_MONEY_UNITS = {"$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD", "us$": "USD", "$us": "USD"}


def _screen(text: str) -> None:
    """Refuse unit texts Pint should not see: long, odd characters, big or chained exponents."""
    if len(text) > MAX_UNIT_CHARS:
        raise QuantError(f"unit text longer than {MAX_UNIT_CHARS} characters", "bound")
    if not _UNIT_CHARS.fullmatch(text):
        raise QuantError(f"unknown unit {text!r}: unexpected character")
    if _CHAINED.search(text):
        raise QuantError(f"unit {text!r}: chained exponents")
    for m in _DIGITS.finditer(text):
        before = text[:m.start()].rstrip()[-1:]
        if m.group() == "1" and _RECIPROCAL.match(text, m.start()) and before in ("", "(", "*"):
            continue  # the 1 of a reciprocal: "1/h", "USD * 1/h"
        if not _EXPONENT.search(text[:m.start()]):
            raise QuantError(f"unit {text!r}: a number in a unit is only allowed as an exponent (m**2)")
        if float(m.group()) > MAX_UNIT_EXPONENT:
            raise QuantError(f"unit {text!r}: exponent above {MAX_UNIT_EXPONENT}", "bound")


def _dims_of(dimensionality: Mapping[str, Any], text: str) -> tuple:
    unknown = [k for k in dimensionality if k not in DIM_NAMES]
    if unknown:
        raise QuantError(f"unit {text!r} has an unsupported dimension {unknown[0]}")
    out = []
    for name in DIM_NAMES:
        e = dimensionality.get(name, 0)
        e = Fraction(e)
        out.append(int(e) if e.denominator == 1 else e)
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def _unit_info_cached(text: str) -> UnitInfo:
    if text.lower() in _DIMENSIONLESS_WORDS:
        return UnitInfo("", Fraction(1), Fraction(0), DIMENSIONLESS)
    _screen(text)
    reg = registry()
    try:
        unit = reg.parse_units(text)
    except Exception as exc:  # UndefinedUnitError, syntax errors, DefinitionSyntaxError, …
        raise QuantError(f"unknown unit {text!r} ({type(exc).__name__})") from None
    try:
        dims = _dims_of(unit.dimensionality, text)
        if unit._units and not all(reg._units[name].is_multiplicative for name in unit._units):
            if len(unit._units) != 1 or next(iter(unit._units.values())) != 1:
                raise QuantError(f"offset unit inside a compound unit {text!r}: use delta_degC / delta_degF")
            zero = reg.Quantity(Fraction(0), unit).to_base_units().magnitude
            one = reg.Quantity(Fraction(1), unit).to_base_units().magnitude
            return UnitInfo(text, Fraction(one) - Fraction(zero), Fraction(zero), dims)
        factor, _ = reg.get_base_units(unit)
    except QuantError:
        raise
    except Exception as exc:
        raise QuantError(f"unit {text!r} cannot be converted ({type(exc).__name__})") from None
    scale: Fraction | float = factor if isinstance(factor, Fraction) else (
        Fraction(factor) if isinstance(factor, int) else float(factor))
    return UnitInfo(text, scale, Fraction(0), dims)


_UNKNOWN_UNITS: dict[str, QuantError] = {}  # refused unit texts (answers such as `18 eggs` repeat them)
MAX_UNKNOWN_UNITS = 4096


def unit_info(text: str) -> UnitInfo:
    """The UnitInfo of a unit text; QuantError("error") for an unknown unit, ("bound") for a huge one."""
    if not isinstance(text, str):
        raise QuantError(f"a unit must be a string, not {type(text).__name__}")
    key = normalise_unit_text(text)
    known = _UNKNOWN_UNITS.get(key)
    if known is not None:
        raise QuantError(str(known), known.kind)
    try:
        return _unit_info_cached(key)
    except QuantError as exc:
        if len(_UNKNOWN_UNITS) < MAX_UNKNOWN_UNITS:
            _UNKNOWN_UNITS[key] = exc
        raise


def parse_unit(text: str):
    """(text) -> pint.Unit; "", "1", "dimensionless" -> dimensionless. QuantError when unknown."""
    info = unit_info(text)
    return registry().parse_units(info.text or "dimensionless")


def dims_text(dims: tuple) -> str:
    """A dimension vector as Pint writes dimensionalities: "[length] / [time]"; "dimensionless"."""
    if dims == DIMENSIONLESS:
        return "dimensionless"
    num = [f"{n}" + (f" ** {e}" if e != 1 else "") for n, e in zip(DIM_NAMES, dims) if e > 0]
    den = [f"{n}" + (f" ** {-e}" if e != -1 else "") for n, e in zip(DIM_NAMES, dims) if e < 0]
    return (" * ".join(num) or "1") + "".join(f" / {d}" for d in den)


# Named SI units a result without a display unit is shown in.
_NAMED = {}


def _named_units() -> dict:
    if not _NAMED:
        for u in ("m", "kg", "s", "K", "A", "mol", "USD", "m/s", "m/s**2", "N", "J", "W", "Pa", "V", "ohm",
                  "C", "kg*m/s", "m**2", "m**3", "kg/m**3", "Hz", "N/m"):
            info = unit_info(u)
            _NAMED.setdefault(info.dims, u)
    return _NAMED


def default_unit(dims: tuple) -> str:
    """The unit text a value of these dimensions is shown in when it has none of its own."""
    if dims == DIMENSIONLESS:
        return ""
    named = _named_units().get(dims)
    if named is not None:
        return named
    num = [u + (f"**{e}" if e != 1 else "") for u, e in zip(BASE_UNITS, dims) if e > 0]
    den = [u + (f"**{-e}" if e != -1 else "") for u, e in zip(BASE_UNITS, dims) if e < 0]
    return ("*".join(num) or "1") + "".join(f"/{d}" for d in den)


# ---------------------------------------------------------------------------------------- values
class Value:
    """A quantity as the evaluator carries it: `mag` in SI base units (Fraction = exact, float =
    inexact), `dims` over DIM_NAMES, and `unit`, the text it is shown in ("" = base/none)."""

    __slots__ = ("mag", "dims", "unit")

    def __init__(self, mag: Fraction | float, dims: tuple = DIMENSIONLESS, unit: str = ""):
        self.mag = mag
        self.dims = dims
        self.unit = unit

    @property
    def exact(self) -> bool:
        return isinstance(self.mag, Fraction)

    @property
    def dimensionless(self) -> bool:
        return self.dims == DIMENSIONLESS

    def magnitude_in(self, unit: str | None = None) -> Fraction | float:
        """The magnitude in `unit` (default: the value's own display unit)."""
        text = self.unit if unit is None else unit
        info = unit_info(text) if text else None
        if info is None:
            if self.dims != DIMENSIONLESS and unit is not None:
                raise QuantError(f"cannot show a {dims_text(self.dims)} value as a plain number", "dimension")
            return self.mag
        if info.dims != self.dims:
            raise QuantError(f"cannot convert {dims_text(self.dims)} to {info.text!r}", "dimension")
        return (self.mag - info.offset) / info.scale

    def to_pint(self):
        """The value as a pint Quantity in its display unit (for users; not used on the hot path)."""
        if self.unit:
            return registry().Quantity(self.magnitude_in(), self.unit)
        return registry().Quantity(self.mag, default_unit(self.dims) or "dimensionless")

    def __repr__(self) -> str:
        return f"Value({format_value(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Value) and self.mag == other.mag and self.dims == other.dims

    def __hash__(self) -> int:
        return hash((self.mag, self.dims))


_NUMBER = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY_RE = re.compile(
    rf"\s*(?P<neg>[-+−])?\s*(?P<cur>\$)?\s*(?P<num>{_NUMBER})(?:\s*/\s*(?P<den>{_NUMBER}))?\s*(?P<pct>%)?"
    r"\s*(?P<unit>.*?)\s*")


def parse_number(text: str) -> Fraction:
    """A decimal numeral ("1,000", "0.25", "1.5e3") as an exact Fraction; bounded digits/exponent."""
    t = text.replace(",", "")
    mantissa, _, exp = t.lower().partition("e")
    digits = sum(c.isdigit() for c in mantissa.lstrip("0."))
    if digits > MAX_LITERAL_DIGITS:
        raise QuantError(f"a number with more than {MAX_LITERAL_DIGITS} digits", "bound")
    if exp and abs(int(exp)) > MAX_DECIMAL_EXPONENT:
        raise QuantError(f"a decimal exponent beyond ±{MAX_DECIMAL_EXPONENT}", "bound")
    try:
        return Fraction(t)
    except (ValueError, ZeroDivisionError):
        raise QuantError(f"not a number: {text!r}") from None


def _from_float(x: float) -> Fraction:
    if not math.isfinite(x):
        raise QuantError(f"not a finite number: {x!r}")
    return Fraction(repr(x))  # the decimal as written, so 0.1 is 1/10


def make_value(magnitude: Fraction | float, unit: str = "") -> Value:
    """A Value from a magnitude in `unit` (converted to SI base; offsets applied)."""
    info = unit_info(unit)
    if info.offset == 0 and info.scale == 1:
        return Value(magnitude, info.dims, info.text)
    return Value(magnitude * info.scale + info.offset, info.dims, info.text)


def parse_quantity(x: Any) -> Value:
    """A Value from "120 km", "$5", "25%", "1/2", "1,000", "3.0 m/s", 16, 2.5 or {"value", "unit"}.

    Exact (Fraction) for every decimal or fraction text and for ints; floats are read as the decimal
    they print as. QuantError("error") for anything else, ("bound") past the digit limits.
    """
    if isinstance(x, str):
        return _parse_text(x)
    if isinstance(x, Value):
        return x
    if isinstance(x, bool):
        raise QuantError("a quantity cannot be a boolean")
    if isinstance(x, int):
        if x.bit_length() > MAX_LITERAL_DIGITS * 4:
            raise QuantError(f"a number with more than {MAX_LITERAL_DIGITS} digits", "bound")
        return Value(Fraction(x))
    if isinstance(x, float):
        return Value(_from_float(x))
    if isinstance(x, Mapping):
        if "value" not in x:
            raise QuantError("a quantity object needs a `value`")
        unit = x.get("unit", "") or ""
        if not isinstance(unit, str):
            raise QuantError("a quantity's `unit` must be a string")
        v = x["value"]
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise QuantError("a quantity's `value` must be a number or a numeric string")
        base = parse_quantity(v)
        if not unit:
            return base
        if base.unit or not base.dimensionless:
            raise QuantError(f"a unit twice: {v!r} and {unit!r}")
        return make_value(base.mag, unit)
    if not isinstance(x, str):
        raise QuantError(f"a quantity must be a string or a number, not {type(x).__name__}")
    return _parse_text(x)


@functools.lru_cache(maxsize=16384)
def _parse_text(x: str) -> Value:
    """parse_quantity of a text, cached: reward batches repeat the same givens and claims. Values
    are never mutated (by convention: the evaluator always builds new ones)."""
    if len(x) > MAX_QUANTITY_CHARS:
        raise QuantError(f"a quantity text longer than {MAX_QUANTITY_CHARS} characters", "bound")
    m = _QUANTITY_RE.fullmatch(x)
    if m is None:
        raise QuantError(f"not a quantity: {x[:60]!r}")
    mag = parse_number(m.group("num"))
    if m.group("den") is not None:
        den = parse_number(m.group("den"))
        if den == 0:
            raise QuantError(f"a fraction with a zero denominator: {x[:60]!r}")
        mag = mag / den
    if m.group("neg") in ("-", "−"):
        mag = -mag
    unit = m.group("unit")
    if m.group("pct"):
        if unit:
            raise QuantError(f"a percentage with a unit: {x[:60]!r}")
        unit = "percent"
    if m.group("cur"):
        if unit and unit_info(unit).dims != unit_info("USD").dims:
            raise QuantError(f"a $ amount with a unit: {x[:60]!r}")
        unit = unit or "USD"
    return make_value(mag, unit)


# ---------------------------------------------------------------------------------------- output
def format_number(x: Fraction | float, digits: int = 10) -> str:
    """"18", "0.25", "3.333333333" (10 significant digits for non-terminating or inexact values)."""
    if isinstance(x, Fraction):
        if x.denominator == 1 and abs(x.numerator) < 10 ** 16:
            return str(x.numerator)
        if abs(x) >= 10 ** 16 or (x != 0 and abs(x) < Fraction(1, 10 ** 300)):
            try:
                return format(x.numerator / x.denominator, f".{digits}g")
            except OverflowError:  # beyond floats: sign, leading digits and the decimal exponent
                n = str(abs(x.numerator) // x.denominator)
                return f"{'-' if x < 0 else ''}{n[0]}.{n[1:digits]}e+{len(n) - 1}"
        d = x.denominator
        while d % 2 == 0:
            d //= 2
        while d % 5 == 0:
            d //= 5
        if d == 1 and x.denominator <= 10 ** 12:  # a short terminating decimal: print it exactly
            sign = "-" if x < 0 else ""
            den, k2, k5 = x.denominator, 0, 0
            while den % 2 == 0:
                den //= 2
                k2 += 1
            while den % 5 == 0:
                den //= 5
                k5 += 1
            k = max(k2, k5)
            s = str(abs(x.numerator) * 10 ** k // x.denominator).rjust(k + 1, "0")
            return f"{sign}{s[:-k]}.{s[-k:]}"
        x = float(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return format(x, f".{digits}g")


def format_value(v: Value, unit: str | None = None) -> str:
    """A value for prompts and answers: "18", "3 m/s", "80 km/h" (in `unit` when given)."""
    shown = v.unit if unit is None else unit
    if not shown and not v.dimensionless:
        shown = default_unit(v.dims)
    mag = v.magnitude_in(shown) if shown else v.mag
    number = format_number(mag)
    return f"{number} {shown}" if shown else number


def same_dims(a: Value, b: Value) -> bool:
    return a.dims == b.dims


def json_number(x: Fraction | float) -> int | float:
    """A value as JSON writes it (step values, gold answers, twins): an int when integral, else the nearest
    float. The one spelling, so the same value is the same JSON in gold traces, labels and pairs."""
    if isinstance(x, Fraction) and x.denominator == 1:
        return int(x)
    f = float(x)
    return int(f) if f.is_integer() and abs(f) < 2**53 else f


__all__ = ["json_number", "registry", "UnitInfo", "unit_info", "parse_unit", "Value", "parse_quantity", "parse_number",
           "make_value", "format_value", "format_number", "dims_text", "default_unit", "DIMENSIONLESS",
           "DIM_NAMES", "MAX_LITERAL_DIGITS", "MAX_DECIMAL_EXPONENT", "MAX_UNIT_CHARS", "MAX_QUANTITY_CHARS"]
