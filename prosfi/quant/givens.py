"""extract_givens: the numbers a question states, found by rules (never by a model).

What counts as a given, in text order (ids g1..gn):
- numerals: 16, 1,000, 2.5, .5, -3 (a minus sign only at the start of a word), 1/2, 2 1/2, 3rd,
  1.5e3, 3.0 × 10^8 (also x, *, \times, 10^{-3});
  `$5`, `$1.5 million`, `60 more dollars` (USD; `5 fewer cents` in cents); `25%`, `25 percent` (percent);
  `2 million` (scaled); "3 dozen" is the given 3 (solutions write 3 * 12 and "$68 per dozen" * 3), "a dozen"
  alone is 12;
- number words: zero … nineteen, twenty … ninety, hundred, thousand, million, and their compounds
  ("twenty-five", "two hundred and fifty", "a hundred"); "half", "a half", "one and a half",
  "a third", "two thirds", "a quarter", "three quarters"; "a dozen", "dozen" (12), "half a dozen" (6);
  "twice", "double(s/d)", "triple(s/d)", "thrice", "quadruple(s/d)";
- a unit when the word right after the number is one (see UNIT_WORDS and UNIT_ABBREVIATIONS:
  "120 km", "1.5 hours", "3 m/s", "20 °C", "5 miles per hour"). Counting nouns ("16 eggs") are not
  units: the given is a plain number. "degrees" alone is left unitless (angle or temperature is
  ambiguous in word problems); "degrees Celsius" is degC.
`units="money"` keeps only USD (and percent); `units="none"` keeps only percent (GSM8K-style
solutions multiply hours by dollars per hour as plain numbers).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from fractions import Fraction

from prosfi.quant.units import MAX_DECIMAL_EXPONENT, MAX_LITERAL_DIGITS, format_number

MAX_QUESTION_CHARS = 20000
MAX_GIVEN_CHARS = 80


@dataclass(frozen=True)
class Given:
    id: str
    value: str  # an exact number text parse_quantity reads: "16", "2.5", "1/2", "1500000"
    unit: str  # a Pint unit text ("km", "USD", "percent") or ""
    text: str  # question[start:end]
    start: int
    end: int

    def to_dict(self) -> dict:
        return asdict(self)


_SMALL = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * (i + 2)
         for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9}
_PARTS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4,
          "fourths": 4, "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7, "eighth": 8,
          "eighths": 8, "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10, "twelfth": 12, "twelfths": 12}
_MULTIPLES = {"twice": 2, "double": 2, "doubled": 2, "doubles": 2, "triple": 3, "tripled": 3, "triples": 3,
              "thrice": 3, "quadruple": 4, "quadrupled": 4, "quadruples": 4}

UNIT_WORDS = {
    **dict.fromkeys(("second", "seconds", "sec", "secs"), "s"),
    **dict.fromkeys(("minute", "minutes", "mins"), "min"),
    **dict.fromkeys(("hour", "hours", "hr", "hrs"), "h"),
    **dict.fromkeys(("day", "days"), "day"), **dict.fromkeys(("week", "weeks"), "week"),
    **dict.fromkeys(("month", "months"), "month"), **dict.fromkeys(("year", "years"), "year"),
    **dict.fromkeys(("mile", "miles"), "mi"), **dict.fromkeys(("meter", "meters", "metre", "metres"), "m"),
    **dict.fromkeys(("kilometer", "kilometers", "kilometre", "kilometres"), "km"),
    **dict.fromkeys(("centimeter", "centimeters", "centimetre", "centimetres"), "cm"),
    **dict.fromkeys(("millimeter", "millimeters", "millimetre", "millimetres"), "mm"),
    **dict.fromkeys(("foot", "feet"), "ft"), **dict.fromkeys(("inch", "inches"), "inch"),
    **dict.fromkeys(("yard", "yards"), "yd"),
    **dict.fromkeys(("gram", "grams"), "g"), **dict.fromkeys(("kilogram", "kilograms"), "kg"),
    **dict.fromkeys(("pound", "pounds"), "lb"), **dict.fromkeys(("ounce", "ounces"), "oz"),
    **dict.fromkeys(("tonne", "tonnes"), "t"),
    **dict.fromkeys(("liter", "liters", "litre", "litres"), "L"),
    **dict.fromkeys(("milliliter", "milliliters", "millilitre", "millilitres"), "mL"),
    **dict.fromkeys(("gallon", "gallons"), "gal"), **dict.fromkeys(("quart", "quarts"), "quart"),
    **dict.fromkeys(("joule", "joules"), "J"), **dict.fromkeys(("kilojoule", "kilojoules"), "kJ"),
    **dict.fromkeys(("watt", "watts"), "W"), **dict.fromkeys(("kilowatt", "kilowatts"), "kW"),
    **dict.fromkeys(("volt", "volts"), "V"), **dict.fromkeys(("amp", "amps", "ampere", "amperes"), "A"),
    **dict.fromkeys(("ohm", "ohms"), "ohm"), **dict.fromkeys(("newton", "newtons"), "N"),
    **dict.fromkeys(("pascal", "pascals"), "Pa"), **dict.fromkeys(("kelvin", "kelvins"), "K"),
    **dict.fromkeys(("mole", "moles"), "mol"), **dict.fromkeys(("hertz",), "Hz"),
    **dict.fromkeys(("cent", "cents"), "cent"), **dict.fromkeys(("dollar", "dollars"), "USD"),
}
UNIT_ABBREVIATIONS = {
    **{u: u for u in """
        km m cm mm kg g mg s ms min h mph kph J kJ MJ W kW kWh MW V kV mV A mA N kN Pa kPa MPa atm L mL
        K degC degF ohm mol Hz kHz lb oz ft yd mi gal km/h m/s m/s^2 m/s**2 m^2 m^3 cm^2 cm^3 kg/m^3 N/m
        g/cm^3 km/s m/min mi/h J/s USD C mC uC nC
    """.split()},
    "ml": "mL", "lbs": "lb", "°C": "degC", "°F": "degF", "℃": "degC", "Ω": "ohm", "kΩ": "kohm",
    "µC": "uC", "μC": "uC", "um": "um", "us": "us", "nm": "nm", "pm": "pm", "fm": "fm", "ns": "ns",
    "pC": "pC", "fC": "fC", "eV": "eV", "keV": "keV", "MeV": "MeV", "GeV": "GeV",
    "m/s²": "m/s^2",
    "m²": "m^2", "m³": "m^3", "cm²": "cm^2", "cm³": "cm^3", "°": "degree",
}

_NUMWORD = "|".join(sorted([*_SMALL, *_TENS, *_SCALES], key=len, reverse=True))
_PARTWORD = "|".join(_PARTS)
_WORDS_RE = (rf"(?:(?:{_NUMWORD}|a)(?:[\s-]+(?:and[\s-]+)?(?:{_NUMWORD}|a\s+(?:half|quarter|third)))*"
             rf"(?:[\s-]+(?:{_PARTWORD}))?)")
_NUMERAL = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+"
_CANDIDATE = re.compile(
    rf"(?P<numeral>(?<![\w.$])(?P<neg>-(?=\d))?(?P<cur>\$\s?)?(?P<num>{_NUMERAL})"
    rf"(?P<sci>[eE][+-]?\d{{1,3}}(?!\d)|\s*(?:×|x|\*|\\times|·)\s*10\s*(?:\^|\*\*)\s*\{{?\s*[+\-−]?\d{{1,3}}(?:\s*\}})?)?"
    rf"(?:(?:\s+(?P<whole_frac>\d+\s*/\s*\d+))|(?:\s*/\s*(?P<den>\d+)))?(?!\d|\s*/\s*\d)(?P<ord>(?:st|nd|rd|th)(?![A-Za-z]))?(?![\d]))"
    rf"|(?P<special>\b(?:{'|'.join(_MULTIPLES)}|half\s+a\s+dozen|a\s+dozen|dozen|an?\s+half|half)\b)"
    rf"|(?P<words>\b{_WORDS_RE}\b)",
    re.IGNORECASE)
_SPACED_THOUSANDS = re.compile(r"(?:[ \u00a0]\d{3})+(?![\d,]|\.\d)")
_SCALE_AFTER = re.compile(r"\s+(million|billion|thousand|hundred)\b", re.IGNORECASE)
_PERCENT_AFTER = re.compile(r"\s*(?:%|percent\b|per\s*cent\b)", re.IGNORECASE)
_UNIT_TOKEN = r"(?:[A-Za-z°Ωµμ℃][A-Za-z°Ωµμ]*(?:/[A-Za-z]+)?(?:\^-?\d|\*\*-?\d|[²³])?)"
_MICRO = ("µ", "μ")  # U+00B5 MICRO SIGN and U+03BC GREEK SMALL LETTER MU: both are written for the prefix
_MONEY_COMPARED = re.compile(r"\s+(?:more|less|fewer|extra|additional)\s+(?P<u>dollars?|cents?)\b", re.IGNORECASE)
_UNIT_AFTER = re.compile(rf"(?:\s*|-)(?P<u>{_UNIT_TOKEN})(?![\w/])(?:\s+(?P<u2>Celsius|Fahrenheit|C|F)\b)?"
                         rf"(?:\s+per\s+(?P<per>{_UNIT_TOKEN})(?![\w/]))?")


# Numbers that name something rather than count it: a chain must not multiply with them, so they are no givens.
_MERIDIEM = r"\s*(?:[ap]\.?m\.?|o'?clock|noon|midnight)(?![A-Za-z])"
_CLOCK = re.compile(
    rf"(?<![\d.:])(?P<t>\d{{1,2}}(?::[0-5]\d(?!\d))?{_MERIDIEM})"  # 5 pm, 5:30 p.m., 3 o'clock
    rf"|\b(?:at|from|to|until|till|by|before|after|between|since|around|and)\s+(?P<t2>\d{{1,2}}:[0-5]\d)(?![\d:])"
    rf"|(?<=\d)\s*-\s*(?P<t3>\d{{1,2}}:[0-5]\d)(?![\d:])",
    re.IGNORECASE)  # "at 5:30", "1:00 - 6:00"; a ratio "7:11" is neither
_LABEL = re.compile(r"\b(?:Route|Highway|Hwy|Interstate|I-|US-|Road|Street|Avenue|Room|Apartment|Apt\.?|Flight|Bus|"
                    r"Channel|Gate|Platform|Locker|No\.|Number)\s*#?\s*(\d+)\b|#\s*(\d+)\b")
_YEAR = re.compile(r"\b(?:in|since|until|till|during|before|after|by|from|of|year|summer|winter|spring|fall|"
                   r"autumn|January|February|March|April|May|June|July|August|September|October|November|December)"
                   r",?\s+((?:1[89]|20)\d\d)(?!\d|[.,]\d|\s*%|\s+(?!(?:and|or|but|she|he|they|it|we|I|the|a|an|"
                   r"when|what|how|if|to|for|with|at|on|in|was|were|is|are|will|had|has|have|who)\b)[a-z])",
                   re.IGNORECASE)


def _name_spans(q: str) -> list[tuple[int, int]]:
    """Where the question names a clock time (`1:00 PM`, `3 pm`), a road or room number (`Route 66`), or a year
    (`in 2019`): spans no given may start in."""
    spans = [m.span(next(k for k in ("t", "t2", "t3") if m.group(k))) for m in _CLOCK.finditer(q)]
    spans += [m.span(1) if m.group(1) else m.span(2) for m in _LABEL.finditer(q)]
    spans += [m.span(1) for m in _YEAR.finditer(q)]
    return sorted(spans)


def _word_value(text: str) -> Fraction | None:
    """The value of a number-word phrase ("two hundred and five", "a dozen", "three quarters")."""
    words = [w for w in re.split(r"[\s-]+", text.lower()) if w and w != "and"]
    if not words:
        return None
    total, current, seen = Fraction(0), Fraction(0), False
    i = 0
    while i < len(words):
        w = words[i]
        if w == "a":
            if i + 1 < len(words) and words[i + 1] in ("half", "quarter", "third"):
                current += Fraction(1, _PARTS[words[i + 1]])
                i += 2
                seen = True
                continue
            if i + 1 < len(words) and (words[i + 1] in _SMALL or words[i + 1] in _TENS):
                i += 1  # "a two and a half hour trip": the article, not one
                continue
            current = current or Fraction(1)
            if i + 1 >= len(words):
                return None  # a lone "a"
        elif w in _SMALL:
            current += _SMALL[w]
            seen = True
        elif w in _TENS:
            current += _TENS[w]
            seen = True
        elif w == "hundred":
            current = (current or 1) * 100
            seen = True
        elif w in _SCALES:
            total += (current or 1) * _SCALES[w]
            current = Fraction(0)
            seen = True
        elif w in _PARTS:
            current = (current or 1) / _PARTS[w]
            seen = True
        else:
            return None
        i += 1
    return total + current if seen else None


def _number_text(x: Fraction) -> str:
    if x.denominator == 1:
        return str(x.numerator)
    s = format_number(x)
    try:
        if Fraction(s) == x:
            return s
    except ValueError:  # pragma: no cover
        pass
    return f"{x.numerator}/{x.denominator}"


def _unit_for(token: str, qualifier: str | None) -> str | None:
    if token.lower() in ("degree", "degrees") and qualifier:
        return "degF" if qualifier[0].upper() == "F" else "degC"
    if token in UNIT_ABBREVIATIONS:
        return UNIT_ABBREVIATIONS[token]
    if token[:1] in _MICRO and "u" + token[1:] in UNIT_ABBREVIATIONS:  # μm, µs, μC
        return UNIT_ABBREVIATIONS["u" + token[1:]]
    if "/" in token and not qualifier:  # μC/m, nC/m: each side a unit
        top, _, bottom = token.partition("/")
        a, b = _unit_for(top, None), _unit_for(bottom, None)
        return f"{a}/{b}" if a and b else None
    return UNIT_WORDS.get(token.lower()) if token.isalpha() else None


def extract_givens(question: str, units: str = "all") -> list[Given]:
    """Every number the question states, in text order, as Given(g1..gn); see the module doc."""
    if units not in ("all", "money", "none"):
        raise ValueError(f"units must be 'all', 'money' or 'none', got {units!r}")
    if not isinstance(question, str):
        return []
    q = question[:MAX_QUESTION_CHARS]
    out: list[Given] = []
    pos = 0
    names = _name_spans(q)
    while (m := _CANDIDATE.search(q, pos)) is not None:
        start, end = m.span()
        pos = max(end, start + 1)
        unit = ""
        named = next((b for a, b in names if a <= start < b), None)
        if named is not None:  # a clock time, a road number, a year: it names, it does not count
            pos = max(pos, named)
            continue
        if m.group("ord") and not m.group("den"):
            continue  # an ordinal ("3rd", "the 21st floor") ranks, it does not count ("1/3rd" stays a third)
        if len(m.group()) > MAX_GIVEN_CHARS or sum(c.isdigit() for c in m.group()) > MAX_LITERAL_DIGITS:
            continue  # not a quantity a word problem states; the verifier would refuse it anyway
        sci_text = None
        if m.group("numeral"):
            value = Fraction(m.group("num").replace(",", ""))
            if m.group("sci"):
                exp = re.search(r"([+\-−]?)\s*(\d+)\s*\}?$", m.group("sci"))
                k = int(exp.group(2)) * (-1 if exp.group(1) in ("-", "−") else 1)
                if abs(k) > MAX_DECIMAL_EXPONENT:
                    continue
                value *= Fraction(10) ** k
                sci_text = f"{m.group('num').replace(',', '')}e{k}"
            if m.group("den"):
                den = int(m.group("den"))
                if den == 0:
                    continue  # "5/0"
                value /= den
            elif m.group("whole_frac"):
                a, b = (int(x) for x in re.split(r"\s*/\s*", m.group("whole_frac")))
                if b == 0 or a >= b:  # "2 10/3" is not a mixed number: keep the whole part alone
                    end = m.start("whole_frac")
                    end = len(q[:end].rstrip())
                else:
                    value += Fraction(a, b)
            if m.group("neg"):
                value = -value
            if m.group("cur"):
                unit = "USD"
                spaced = _SPACED_THOUSANDS.match(q, end)
                if spaced and len(m.group("num")) <= 3 and "," not in m.group("num") and "." not in m.group("num"):
                    value = Fraction(m.group("num") + spaced.group().replace(" ", "").replace("\u00a0", ""))
                    end = spaced.end()  # "$400 000": thousands grouped by spaces, as many countries write them
            sc = _SCALE_AFTER.match(q, end)
            if sc and not m.group("ord"):
                word = sc.group(1).lower()
                value *= _SCALES[word]
                end = sc.end()
        elif m.group("special"):
            phrase = re.sub(r"\s+", " ", m.group("special").lower())
            if phrase in _MULTIPLES:
                value = Fraction(_MULTIPLES[phrase])
            elif phrase == "half a dozen":
                value = Fraction(6)
            elif phrase.endswith("dozen"):
                value = Fraction(12)
            else:
                value = Fraction(1, 2)
        else:
            if re.match(r"an?\s", m.group("words"), re.IGNORECASE) and not re.search(
                    rf"hundred|thousand|million|billion|dozen|{_PARTWORD}", m.group("words"), re.I):
                pos = start + 1  # "a four-week month", "a one-pound steak": the article leads no scale; the
                continue  # number after it is read on its own
            v = _word_value(m.group("words"))
            if v is None:
                continue
            value = v
        if m.group("numeral") and not unit and q[end:end + 1] == "$":
            unit, end = "USD", end + 1  # "15$", "6000$": the sign written after the number
        pct = _PERCENT_AFTER.match(q, end)
        if pct and unit != "USD":
            unit, end = "percent", pct.end()
        elif not unit and not m.group("ord"):
            um = _UNIT_AFTER.match(q, end)
            mc = _MONEY_COMPARED.match(q, end)
            if mc:  # "60 more dollars than Kassidy": a difference of $60 (the unit word after the comparative)
                unit, end = ("cent" if mc.group("u").lower().startswith("cent") else "USD"), mc.end()
            elif um:
                u = _unit_for(um.group("u"), um.group("u2"))
                if u is not None:
                    end = um.end("u2") if um.group("u2") and u in ("degC", "degF") else um.end("u")
                    per = um.group("per") and _unit_for(um.group("per"), None)
                    if per:
                        u, end = f"{u}/{per}", um.end("per")
                    unit = u
        if units == "none" and unit != "percent":
            unit = ""
        elif units == "money" and unit not in ("USD", "cent", "percent"):
            unit = ""
        number = _number_text(value)
        if sci_text is not None and len(number) > 20:
            number = ("-" if value < 0 else "") + sci_text  # 1.6e-19, not twenty digits
        out.append(Given(f"g{len(out) + 1}", number, unit, q[start:end], start, end))
        pos = max(pos, end)
    return out


__all__ = ["Given", "extract_givens", "UNIT_WORDS", "UNIT_ABBREVIATIONS"]
