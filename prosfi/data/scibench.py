"""SciBench in its public JSON format -> quantity problems for evaluation (docs/quantity.md "Data").

A SciBench file (`dataset/original/<topic>.json`) is a JSON array of records with `problem_text` (LaTeX
inline math), `answer_number` and `unit` in LaTeX, e.g. `$\\mathrm{~m} / \\mathrm{s}^2$` or
`$10^3 \\mathrm{~N} / \\mathrm{C}$`. The unit is read into a Pint unit; a scale prefix (`10^3`,
`10^{-19}`, `2 \\times 10^5`) is folded into the answer's value (`answer_number` 2.57 with unit
`10^{11} J` -> 2.57e11 J). Units that are symbolic expressions (`$m l^2$`, `$u_1$`,
`$\\sqrt{b/(a+g)}$`) cannot be checked numerically: those records are skipped with the reason.
SciBench grades answers within 5% relative error; the problems carry that tolerance
(`extra["tolerance"] = {"rel": 0.05}`). No gold chains: SciBench is for evaluation.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

from prosfi.data.problem import Problem

SCIBENCH_TOLERANCE = {"rel": 0.05}

_SCALE = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)\s*\\times\s*)?10\s*\^\s*\{?\s*([-−]?\s*\d+)\s*\}?\s*")
_LATEX_WORDS = {
    r"\cdot": "*", r"\times": "*", r"\%": "percent", r"\circ": "degree", r"\AA": "angstrom",
    r"\Omega": "ohm", r"\mu": "u", r"\degree": "degree",
}


# Outside `\mathrm{}` a single letter is read as a unit only when it is one of these SI symbols (SciBench
# writes `$N$`, `$C$`, `N `, ` m`, `in terms of $e$`); any other letter is a variable (`$m l^2$`, `$L$`).
_BARE_UNIT_LETTERS = frozenset("m s J N C W V A K e".split())
# Counting nouns in a unit (`$10^{10} \text{ electrons; }$`): the answer is a plain number.
_COUNT_WORDS = frozenset("electron electrons proton protons neutron neutrons atom atoms molecule molecules "
                         "photon photons particle particles nucleus nuclei ion ions".split())
# unit vectors: `N \hat{\mathrm{i}}` is N
_HAT = re.compile(r"\\hat\s*\{\s*(?:\\mathrm\s*\{[^{}]*\}|[^{}]*)\s*\}")
_MICRO_MARKED = re.compile(r"\\mu\s*\\(?:mathrm|text|rm)\s*\{\s*~?\s*")  # `\mu \mathrm{C}`: one unit, uC
_MICRO_BARE = re.compile(r"\\mu\s*(?=[A-Za-z])")  # `\mu C`


def _join_micro(text: str, micro: str) -> str:
    r"""`\mu \mathrm{C}` and `\mu C` as one prefixed unit (`uC`; `μC` in question text), never the atomic
    mass unit `u` times a coulomb."""
    return _MICRO_BARE.sub(micro, _MICRO_MARKED.sub(lambda m: "\\mathrm{" + micro, text))


def _unmarked_unit(token: str) -> bool:
    r"""A word written outside `\mathrm{}` that is still a unit: an SI letter from the short list, a counting
    noun, or a longer name Pint knows (`km`, `J`, `MeV`, `seconds`, `years`, `days`)."""
    from prosfi.quant import QuantError
    from prosfi.quant.units import unit_info

    if len(token) == 1:
        return token in _BARE_UNIT_LETTERS
    if token.lower() in _COUNT_WORDS:
        return True
    try:
        unit_info(token)
    except QuantError:
        return False
    return True


class UnitError(ValueError):
    """A LaTeX unit we cannot read as a Pint unit."""


def _strip_latex(text: str) -> str:
    t = text.replace("$", " ")
    t = re.sub(r"\\(?:mathrm|text|mathrm\s*|rm|operatorname)\s*\{\s*~?\s*([^{}]*)\}", r" \1 ", t)
    for k, v in _LATEX_WORDS.items():
        t = t.replace(k, f" {v} ")
    t = t.replace("~", " ").replace("\\,", " ").replace("\\ ", " ").replace("−", "-")
    return t


def latex_unit(text: str) -> tuple[Fraction, str]:
    """A SciBench LaTeX unit -> (scale factor, Pint unit text). `$10^3 \\mathrm{~N} / \\mathrm{C}$` ->
    (1000, "N / C"). Raises UnitError with the reason."""
    from prosfi.quant import QuantError, parse_unit

    t = (text or "").strip().strip("$").strip()
    t = re.sub(r"\^\s*\{?\s*\\circ\s*\}?\s*(?:\\mathrm\s*\{\s*~?\s*C\s*\}|C\b)", r"\\mathrm{degC}", t)
    t = re.sub(r"\^\s*\{?\s*\\circ\s*\}?", r"\\mathrm{degree}", t)
    scale = Fraction(1)
    m = _SCALE.match(t)
    if m:
        mant = Fraction(m.group(1)) if m.group(1) else Fraction(1)
        exp = int(m.group(2).replace("−", "-").replace(" ", ""))
        if abs(exp) > 60:
            raise UnitError(f"scale 10^{exp} is out of range")
        scale = mant * Fraction(10) ** exp
        t = t[m.end():]
    t = _join_micro(_HAT.sub(" ", t), "u")
    outside = re.sub(r"\\(?:mathrm|text|rm|operatorname)\s*\{[^{}]*\}", " ", t)
    outside = re.sub(r"\\(?:cdot|times|circ|AA|Omega|mu|degree)(?![A-Za-z])|\\%|\$", " ", outside)
    if re.search(r"[_=\\]", outside) or not all(_unmarked_unit(w) for w in re.findall(r"[A-Za-z]+", outside)):
        raise UnitError(f"unit {text.strip()!r} is a symbolic expression, not a unit")
    u = _strip_latex(t)
    u = " ".join(w for w in re.split(r"\s+", re.sub(r"[;,:]", " ", u)) if w.lower() not in _COUNT_WORDS)
    u = re.sub(r"\^\s*\{\s*([-−]?\s*\d+(?:\.\d+)?)\s*\}", lambda mm: "**" + mm.group(1).replace(" ", ""), u)
    u = re.sub(r"\^\s*([-−]?\d+)", r"**\1", u)
    u = re.sub(r"[{}]", " ", u)
    u = re.sub(r"\s+", " ", u).strip()
    u = re.sub(r"\s*\*\*\s*", "**", u)
    u = re.sub(r"(?<=[A-Za-z0-9)])\s+(?=[A-Za-z(])", " * ", u)  # "kg m**2" -> "kg * m**2"
    if not u:
        return scale, ""
    if not re.fullmatch(r"[A-Za-z_0-9 */()+.^-]+", u.replace("**", "^")):
        raise UnitError(f"unit {text.strip()!r} is not a unit we can read")
    try:
        parse_unit(u)
    except QuantError as exc:
        raise UnitError(f"unit {text.strip()!r} ({u!r}): {exc}") from None
    return scale, u


def plain_question(latex: str) -> str:
    """Problem text with inline LaTeX units and scientific notation made readable (`$2.0 \\mathrm{~kg}$` ->
    `2.0 kg`, `7 \\times 10^4` -> `7e4`), for the prompt and for extracting givens."""
    t = re.sub(r"(\d)\s*\\times\s*10\s*\^\s*\{?\s*([-−]?\d+)\s*\}?", r"\1e\2", latex)
    # `30^{\circ}` -> 30°, `25^{\circ} \mathrm{C}` -> 25°C (the givens read ° as degree, °C as degC)
    t = re.sub(r"(?:\{\s*\})?\s*\^\s*\{?\s*\\circ\s*\}?(?:\s*(?:\\mathrm\s*\{\s*~?\s*([CF])\s*\}|([CF])\b))?",
               lambda m: "°" + (m.group(1) or m.group(2) or ""), t)
    t = _strip_latex(re.sub(r"\\mu(?![A-Za-z])", "μ", _join_micro(t, "μ")))
    t = re.sub(r"\^\s*\{\s*([^{}]*)\}", r"^\1", t)
    t = re.sub(r"(?<=[A-Za-z)])\s+\^", "^", t)  # `\mathrm{m}^2` -> "m^2", not "m ^2"
    t = re.sub(r"\s+([,.;:?)])", r"\1", re.sub(r"\s+", " ", t)).strip()
    t = re.sub(r"(?<=[A-Za-z0-9])\s*/\s*(?=[A-Za-z])", "/", t)  # "km / h" -> "km/h"
    return t


SYMBOLIC_MODES = ("skip", "coefficient")


def problem_from_record(record: Any, pid: str, topic: str, symbolic: str = "skip") -> Problem:
    """One SciBench record as a quantity problem. A unit that is a symbolic expression (`$m l^2$`) raises
    UnitError with `symbolic="skip"`; with `symbolic="coefficient"` the problem asks for the number that
    multiplies it, as SciBench grades it (a plain gold, `extra["unit_symbolic"]` the LaTeX): not
    unit-checked."""
    from prosfi.quant import extract_givens
    from prosfi.quant.units import format_number

    if symbolic not in SYMBOLIC_MODES:
        raise ValueError(f"symbolic must be one of {SYMBOLIC_MODES}, got {symbolic!r}")

    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    text = record.get("problem_text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("no 'problem_text'")
    raw = str(record.get("answer_number", "")).strip().replace("−", "-")
    try:
        number = Fraction(raw)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"answer_number {raw!r} is not a number") from None
    coefficient_of = ""
    try:
        scale, unit = latex_unit(str(record.get("unit") or ""))
    except UnitError as exc:
        if symbolic != "coefficient" or "symbolic" not in str(exc):
            raise
        scale, unit, coefficient_of = Fraction(1), "", str(record.get("unit")).strip()
    question = plain_question(text)
    if coefficient_of:
        question = question if question.endswith((".", "?", "!")) else question + "."
        question += f" Give the answer as the number that multiplies ${coefficient_of.strip('$ ')}$."
    try:
        givens = [{"id": g.id, "value": g.value, "unit": g.unit, "text": g.text, "start": g.start, "end": g.end}
                  for g in extract_givens(question)]
    except ValueError:
        givens = []
    value = format_number(number * scale, 10)
    return Problem(
        id=pid, kind="quantity", premises=[], source="scibench", question=question, givens=givens,
        target={"name": "answer", "unit": unit}, answer={"value": value, "unit": unit}, difficulty=topic,
        extra={"tolerance": dict(SCIBENCH_TOLERANCE), "latex": text.strip(),
               "problemid": str(record.get("problemid", "")).strip(),
               "unit_latex": str(record.get("unit", "")).strip(),
               **({"unit_symbolic": coefficient_of} if coefficient_of else {})},
    )


def load_scibench(path: str | Path, limit: int | None = None, skipped: list | None = None,
                  symbolic: str = "skip") -> list[Problem]:
    """Problems from one SciBench JSON file (ids `scibench-<file stem>-NNNN` by position); records that
    cannot be read (symbolic units unless `symbolic="coefficient"`, non-numeric answers) go to `skipped` as
    (index, reason)."""
    if symbolic not in SYMBOLIC_MODES:
        raise ValueError(f"symbolic must be one of {SYMBOLIC_MODES}, got {symbolic!r}")
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: a SciBench file is a JSON array of records")
    topic = re.sub(r"[^A-Za-z0-9_-]+", "_", path.stem)
    out = []
    for i, rec in enumerate(data):
        if limit is not None and len(out) >= limit:
            break
        try:
            out.append(problem_from_record(rec, f"scibench-{topic}-{i:04d}", topic, symbolic))
        except ValueError as exc:
            if skipped is not None:
                skipped.append((i, str(exc)))
    return out
