"""Composites: a chain judged as the one function it computes (docs/quantity.md, "Composites").

Every step's expression, with the steps it cites substituted, is one exact rational function of the givens,
the literals written and the constants `pi`/`e`: a numerator and a denominator polynomial built by the naive
rules (a product multiplies numerators and denominators, a quotient cross-multiplies, a sum puts its terms
over a common denominator), never simplified. What simplification would have done is exactly what the
rules look for:

- a common factor that cancels between a numerator and a denominator (`s1 = g1 * g2`, `s2 = g2 + s1 / g1`
  is `2 * g2` only because g1 cancels; `g1 * 2 * pi / pi`; `s1 = g1 * 60`, `s2 = s1 / 60`);
- a symbol the step uses that is gone from its composite (`(g1 + g2) - g2`);
- like terms that merge into a multiple nobody wrote (`s1 = g1 + g2`, `s2 = s1 + g1` is `2 * g1 + g2`).

A literal is a symbol of its own (one per number: the two 60s of `* 60` and `/ 60` are one symbol, so they
cancel), unless the step's grounding read it as a given (it is then that given, scaled); `pi` and `e` are
symbols; an opaque operation (floor, ceil, round, `%`, `//`, min, max, abs, roots, powers by a non-integer,
exp, log, trigonometry) is an atom: a symbol keyed by the operation and its arguments' composites, which are
judged themselves. Common factors are found exactly enough without multivariate factoring: both polynomials
are restricted to one random line through the symbols' space, modulo the prime 2**61 - 1, where a univariate
gcd is cheap; a non-constant common factor stays one on a generic line, and a spurious common root has
probability about degree / 2**61. Equalities (restatements) are read the same way: both sides evaluated at
random points modulo that prime, with the literals at their own values.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

P = (1 << 61) - 1  # a Mersenne prime: arithmetic modulo P is exact and cheap
MAX_TERMS = 2048  # monomials in a numerator or denominator
MAX_DEGREE = 96  # total degree of either
MAX_POWER = 12  # an integer exponent expanded as a product; beyond it the power is an atom

Mono = tuple  # ((symbol index, exponent), ...) sorted by index
Poly = dict  # Mono -> Fraction (no zero coefficients)


class TooLarge(Exception):
    """A composite past the size bounds: the chain is refused as too large to judge, never passed."""


class Collapse(Exception):
    """A composite that collapses; the message says how."""


# ------------------------------------------------------------------------------------------ symbols
@dataclass
class Symbols:
    """Symbol table of one problem: an index per symbol (a given, a literal number, a constant, an atom), a
    random line through the symbols' space (for gcds) and two random points (for identities). A literal's
    points are its own value (x * 2 * 0.5 is x); a given's, a constant's and an atom's are random."""

    seed: int

    def __post_init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.names: list[str] = []
        self.line: list[tuple[int, int]] = []
        self.points: list[tuple[int, int]] = []
        self.kinds: list[str] = []
        self._rng = random.Random(self.seed)

    def of(self, key: Any, name: str, kind: str, value: Fraction | None = None) -> int:
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.names)
            self.names.append(name)
            self.kinds.append(kind)
            r = self._rng
            self.line.append((r.randrange(1, P), r.randrange(1, P)))
            if value is not None:  # a literal: its own value at both points
                v = modp(value)
                self.points.append((v, v))
            elif kind == "constant":  # pi, e: one unknown value, the same at both points
                v = r.randrange(1, P)
                self.points.append((v, v))
            else:
                self.points.append((r.randrange(1, P), r.randrange(1, P)))
        return i


def modp(x: Fraction | int) -> int:
    x = Fraction(x)
    den = x.denominator % P
    if den == 0:  # pragma: no cover - a denominator divisible by 2**61 - 1
        den = 1
    return x.numerator % P * pow(den, -1, P) % P


# ------------------------------------------------------------------------------------------ univariate mod P
def _utrim(a: list[int]) -> list[int]:
    while a and a[-1] == 0:
        a.pop()
    return a


def _umul(a: list[int], b: list[int]) -> list[int]:
    if not a or not b:
        return []
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] = (out[i + j] + x * y) % P
    return _utrim(out)


def _uadd(a: list[int], b: list[int], sign: int = 1) -> list[int]:
    n = max(len(a), len(b))
    out = [((a[i] if i < len(a) else 0) + sign * (b[i] if i < len(b) else 0)) % P for i in range(n)]
    return _utrim(out)


def _umod(a: list[int], b: list[int]) -> list[int]:
    a = list(a)
    inv = pow(b[-1], -1, P)
    while len(a) >= len(b) and a:
        f = a[-1] * inv % P
        shift = len(a) - len(b)
        for i, y in enumerate(b):
            a[shift + i] = (a[shift + i] - f * y) % P
        _utrim(a)
    return a


def gcd_degree(a: list[int], b: list[int]) -> int:
    """Degree of gcd(a, b) over GF(P) (0: coprime; the gcd of a non-zero polynomial with 0 is itself)."""
    a, b = _utrim(list(a)), _utrim(list(b))
    if not a:
        return max(len(b) - 1, 0)
    while b:
        a, b = b, _umod(a, b)
    return len(a) - 1


# ------------------------------------------------------------------------------------------ polynomials
def _mono_mul(a: Mono, b: Mono) -> Mono:
    if not a:
        return b
    if not b:
        return a
    d = dict(a)
    for s, e in b:
        d[s] = d.get(s, 0) + e
    return tuple(sorted((s, e) for s, e in d.items() if e))


def _pmul(a: Poly, b: Poly) -> Poly:
    if len(a) * len(b) > MAX_TERMS * 8:
        raise TooLarge("a product with too many terms")
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = _mono_mul(ma, mb)
            c = out.get(m, 0) + ca * cb
            if c:
                out[m] = c
            else:
                out.pop(m, None)
    _bound(out)
    return out


def _bound(p: Poly) -> None:
    if len(p) > MAX_TERMS:
        raise TooLarge(f"more than {MAX_TERMS} terms")
    for m in p:
        if sum(e for _, e in m) > MAX_DEGREE:
            raise TooLarge(f"degree over {MAX_DEGREE}")


def _symbols(p: Poly) -> set[int]:
    return {s for m in p for s, _ in m}


def _line(p: Poly, syms: Symbols) -> list[int]:
    """The polynomial restricted to the problem's random line, modulo P."""
    out: list[int] = []
    cache: dict[tuple[int, int], list[int]] = {}
    for m, c in p.items():
        term = [modp(c)]
        for s, e in m:
            key = (s, e)
            f = cache.get(key)
            if f is None:
                a, b = syms.line[s]
                f, base = [1], [a, b]
                for _ in range(abs(e)):
                    f = _umul(f, base)
                cache[key] = f
            term = _umul(term, f)
        out = _uadd(out, term)
    return out


def _at(p: Poly, syms: Symbols, k: int) -> int:
    total = 0
    for m, c in p.items():
        t = modp(c)
        for s, e in m:
            t = t * pow(syms.points[s][k], e, P) % P
        total = (total + t) % P
    return total


def _at_values(p: Poly, values: dict[int, int]) -> int:
    total = 0
    for m, c in p.items():
        t = modp(c)
        for s, e in m:
            t = t * pow(values[s], e, P) % P
        total = (total + t) % P
    return total


def _is_const(p: Poly) -> bool:
    return all(not m for m in p)


def _single(p: Poly) -> bool:
    return len(p) == 1


# ------------------------------------------------------------------------------------------ composites
@dataclass(frozen=True)
class Merge:
    """Like terms that merged in a sum: `multiple` is what the larger side became (`g1 + g1` is 2)."""

    term: str
    multiple: Fraction


@dataclass
class Composite:
    """A numerator and a denominator over the problem's symbols, as the naive rules built them."""

    num: Poly
    den: Poly
    uses: frozenset  # symbols the expression used on its way here (through cited steps too)
    merges: tuple = ()
    opaque: tuple = ()  # (function name, Composite args, the node) of each atom built on the way
    _lines: tuple | None = None

    def key(self) -> tuple:
        return (frozenset(self.num.items()), frozenset(self.den.items()))

    def symbols(self) -> set[int]:
        return _symbols(self.num) | _symbols(self.den)

    def lines(self, syms: Symbols) -> tuple[list[int], list[int]]:
        if self._lines is None:
            self._lines = (_line(self.num, syms), _line(self.den, syms))
        return self._lines

    def at(self, syms: Symbols, k: int) -> tuple[int, int]:
        return _at(self.num, syms, k), _at(self.den, syms, k)

    def constant(self) -> bool:
        return _is_const(self.num) and _is_const(self.den)


def const(c: Fraction) -> Composite:
    return Composite({(): Fraction(c)} if c else {}, {(): Fraction(1)}, frozenset())


def symbol(i: int, scale: Fraction = Fraction(1)) -> Composite:
    return Composite({((i, 1),): Fraction(scale)}, {(): Fraction(1)}, frozenset({i}))


def reciprocal_symbol(i: int, scale: Fraction = Fraction(1)) -> Composite:
    """`scale / x`: a literal read as the reciprocal of a given (3 in `x / 3` for "a third")."""
    return Composite({(): Fraction(scale)}, {((i, 1),): Fraction(1)}, frozenset({i}))


def shifted_symbol(i: int, sign: int) -> Composite:
    """`1 - x` or `1 + x`: a literal read as the complement or growth factor of a fraction given."""
    return Composite({(): Fraction(1), ((i, 1),): Fraction(sign)}, {(): Fraction(1)}, frozenset({i}))


class Algebra:
    """The naive rules over one problem's symbols; each operation raises Collapse when simplification would
    cancel something, and records like terms that merge."""

    def __init__(self, syms: Symbols, strict: bool = True) -> None:
        self.syms = syms
        self.strict = strict  # raise at the first collapse; else record it in `collapses` and go on
        self.collapses: list[str] = []
        self.cancelled: list[Composite] = []  # what each operation whose factors cancelled left, and each difference

    def _flag(self, exc: Collapse) -> None:
        if self.strict:
            raise exc
        self.collapses.append(str(exc))

    def _show(self, mono: Mono) -> str:
        parts = []
        for s, e in mono:
            parts.append(self.syms.names[s] + (f"**{e}" if e != 1 else ""))
        return " * ".join(parts) or "1"

    def _check_kept(self, out: Composite, *parts: Composite, terms: bool = False) -> Composite:
        gone = set().union(*(p.symbols() for p in parts)) - out.symbols()
        if gone:
            names = ", ".join(sorted(self.syms.names[s] for s in gone))
            exc = Collapse(f"{names} cancels out of the composite: the chain computes a function without it")
            if terms or any(self.syms.kinds[s] in ("literal", "constant") for s in gone):
                raise exc  # a number written and taken back (x 60 / 60, pi / pi), terms that cancel (x - x): never
                # a formula's; a given a product cancels (a price per item, then items times a price) may be
            self._flag(exc)
        return out

    def _gcd(self, a: Poly, b: Poly) -> int:
        if _is_const(a) or _is_const(b):
            return 0
        la, lb = _line(a, self.syms), _line(b, self.syms)
        return gcd_degree(la, lb)

    def _cancel(self, what: str) -> Collapse:
        return Collapse(f"a common factor cancels between numerator and denominator ({what}): the chain "
                        "computes less than it writes")

    def neg(self, a: Composite) -> Composite:
        return Composite({m: -c for m, c in a.num.items()}, a.den, a.uses, a.merges, a.opaque)

    def mul(self, a: Composite, b: Composite) -> Composite:
        cancels = self._gcd(a.num, b.den) or self._gcd(b.num, a.den)
        out = Composite(_pmul(a.num, b.num), _pmul(a.den, b.den), a.uses | b.uses, a.merges + b.merges,
                        a.opaque + b.opaque)
        if cancels:
            self.cancelled.append(out)
            self._flag(self._cancel("a product"))
        return self._check_kept(out, a, b)

    def div(self, a: Composite, b: Composite) -> Composite:
        if not b.num:
            raise Collapse("divides by a composite that is 0")
        cancels = self._gcd(a.num, b.num) or self._gcd(a.den, b.den)
        num, den = _pmul(a.num, b.den), _pmul(a.den, b.num)
        out = Composite(num, den, a.uses | b.uses, a.merges + b.merges, a.opaque + b.opaque)
        if cancels:
            self.cancelled.append(out)
            self._flag(self._cancel("a quotient"))
        return self._check_kept(out, a, b)

    def add(self, a: Composite, b: Composite, sign: int = 1) -> Composite:
        shared = 0
        if a.den == b.den:
            na, nb, den = a.num, b.num, a.den
        elif _single(a.den) and _single(b.den):  # monomial denominators: over their lcm
            (ma, ca), = a.den.items()
            (mb, cb), = b.den.items()
            da, db = dict(ma), dict(mb)
            lcm = {s: max(da.get(s, 0), db.get(s, 0)) for s in set(da) | set(db)}
            fa = tuple(sorted((s, e - da.get(s, 0)) for s, e in lcm.items() if e - da.get(s, 0)))
            fb = tuple(sorted((s, e - db.get(s, 0)) for s, e in lcm.items() if e - db.get(s, 0)))
            na = _pmul(a.num, {fa: 1 / ca})
            nb = _pmul(b.num, {fb: 1 / cb})
            den = {tuple(sorted((s, e) for s, e in lcm.items() if e)): Fraction(1)}
        else:
            na, nb, den = _pmul(a.num, b.den), _pmul(b.num, a.den), _pmul(a.den, b.den)
            shared = self._gcd(a.den, b.den)
        merges = []
        num: Poly = dict(na)
        for m, c in nb.items():
            c = sign * c
            old = num.get(m)
            if old is None:
                num[m] = c
                continue
            if m and (old > 0) == (c > 0):
                merges.append(Merge(self._show(m), (old + c) / min(old, c, key=abs)))
            new = old + c
            if new:
                num[m] = new
            else:
                del num[m]
        _bound(num)
        out = Composite(num, den, a.uses | b.uses, a.merges + b.merges + tuple(merges), a.opaque + b.opaque)
        if not num:
            raise Collapse("the terms cancel to 0")
        if sign < 0 or all(c * sign < 0 for c in b.num.values()):
            self.cancelled.append(out)  # a difference: the checker refuses one that is a given, a step or a number
        if not _is_const(den) and self._gcd(num, den) > shared:
            self.cancelled.append(out)
            self._flag(self._cancel("a sum"))
        return self._check_kept(out, a, b, terms=True)

    def power(self, a: Composite, n: int) -> Composite:
        if n == 0:
            raise Collapse("raises to the power 0")
        base = a if n > 0 else Composite(a.den, a.num, a.uses, a.merges, a.opaque)
        num, den = {(): Fraction(1)}, {(): Fraction(1)}
        for _ in range(abs(n)):
            num, den = _pmul(num, base.num), _pmul(den, base.den)
        out = Composite(num, den, a.uses, a.merges, a.opaque)
        return out

    def atom(self, func: str, args: list[Composite], node: Any = None) -> Composite:
        key = ("atom", func, tuple(a.key() for a in args))
        shown = f"{func}(…)"
        i = self.syms.of(key, shown, "atom")
        uses = frozenset().union(*(a.uses for a in args)) | {i}
        merges = tuple(m for a in args for m in a.merges)
        opaque = tuple(o for a in args for o in a.opaque) + ((func, tuple(args), node),)
        return Composite({((i, 1),): Fraction(1)}, {(): Fraction(1)}, uses, merges, opaque)

    # ---------------------------------------------------------------- identities
    def gone(self, a: Composite) -> list[str]:
        """The symbols of a composite's naive form that its function does not depend on (a factor that cancelled
        took them with it): each moved alone at a random point, modulo P."""
        out = []
        base = {i: self.syms.points[i][0] for i in a.symbols()}
        n0, d0 = _at_values(a.num, base), _at_values(a.den, base)
        for i in sorted(a.symbols()):
            moved = dict(base)
            moved[i] = (base[i] * 7 + 3) % P or 5
            n1, d1 = _at_values(a.num, moved), _at_values(a.den, moved)
            if n0 * d1 % P == n1 * d0 % P:
                out.append(i)
        return out

    def proportional(self, a: Composite, b: Composite) -> bool:
        """a = c * b for a constant c (the literals at their values)."""
        an, ad = a.at(self.syms, 0)
        bn, bd = b.at(self.syms, 0)
        cn, cd = a.at(self.syms, 1)
        dn, dd = b.at(self.syms, 1)
        if not (ad and bn and cd and dn):
            return False
        return an * bd % P * cd % P * dn % P == cn * dd % P * ad % P * bn % P

    def equal(self, a: Composite, b: Composite) -> bool:
        """a == b as functions (both random points, literals at their values)."""
        for k in (0, 1):
            an, ad = a.at(self.syms, k)
            bn, bd = b.at(self.syms, k)
            if an * bd % P != bn * ad % P:
                return False
        return True

    def is_constant(self, a: Composite) -> bool:
        """No given, constant or atom moves it: the two points agree (literals are at their values there)."""
        if not any(self.syms.kinds[s] in ("given", "atom", "constant") for s in a.symbols()):
            return True
        an, ad = a.at(self.syms, 0)
        bn, bd = a.at(self.syms, 1)
        return an * bd % P == bn * ad % P


# ------------------------------------------------------------------------------------------ from a step
# The primitives as formulas over their parameters (docs/quantity.md, "Primitives"); their numbers (2, 1/2)
# are the formula's, not literals the policy wrote. `R` is the gas constant, a constant symbol.
FORMULAS: dict[str, str] = {
    "add": "a + b", "subtract": "a - b", "multiply": "a * b", "divide": "a / b", "pow": "base ** exponent",
    "square_root": "sqrt(x)", "percent_of": "percent * whole", "percent_ratio": "part / whole",
    "percent_change": "(new - old) / old", "increase_by_percent": "value * (1 + percent)",
    "decrease_by_percent": "value * (1 - percent)", "rate": "amount / time", "unit_price": "total_cost / quantity",
    "total_cost": "unit_price * quantity", "convert": "value", "average_speed": "distance / time",
    "distance": "speed * time", "time_from_distance_speed": "distance / speed",
    "acceleration": "(final_velocity - initial_velocity) / time",
    "final_velocity": "initial_velocity + acceleration * time",
    "displacement_const_accel": "initial_velocity * time + acceleration * time ** 2 / 2",
    "final_velocity_from_distance": "sqrt(initial_velocity ** 2 + 2 * acceleration * distance)",
    "kinetic_energy": "mass * velocity ** 2 / 2", "potential_energy": "mass * gravity * height",
    "work": "force * distance", "power": "work / time", "mechanical_power": "force * velocity",
    "efficiency": "useful / total", "momentum": "mass * velocity", "impulse": "force * time",
    "ohm_voltage": "current * resistance", "ohm_current": "voltage / resistance", "resistance": "voltage / current",
    "electric_power": "voltage * current", "electric_energy": "power * time", "charge": "current * time",
    "ideal_gas_pressure": "amount * R * temperature / volume", "ideal_gas_volume": "amount * R * temperature / pressure",
    "ideal_gas_temperature": "pressure * volume / (amount * R)",
    "ideal_gas_amount": "pressure * volume / (R * temperature)", "newton_force": "mass * acceleration",
    "weight": "mass * gravity", "density": "mass / volume", "mass_from_density": "density * volume",
    "pressure": "force / area", "spring_force": "spring_constant * extension", "wave_speed": "frequency * wavelength",
    "frequency": "1 / period", "area_rectangle": "length * width", "volume_box": "length * width * height",
}
VARIADIC = ("sum", "average", "series_resistance", "parallel_resistance")


def compose_expr(alg: Algebra, expr: Any, env: dict[str, Composite], literals: dict[int, Composite],
                 formula: bool = False) -> Composite:
    """The composite of a parsed expression (`prosfi.quant.expr`): names from `env` (givens, cited steps'
    composites), literals from `literals` (those the grounding read as givens) or as literal symbols (plain
    numbers in a primitive's `formula`). A post-order walk with an explicit stack, as the evaluator's."""
    from prosfi.quant.expr import BinOp, Call, Name, Num, Unary

    syms = alg.syms
    values: list[Composite] = []
    todo: list[tuple[Any, bool]] = [(expr, False)]
    while todo:
        node, ready = todo.pop()
        t = type(node)
        if id(node) in literals:
            values.append(literals[id(node)])
        elif t is Num:
            v = node.value
            if formula or not v:
                values.append(const(v))
            else:
                values.append(symbol(syms.of(("lit", v), node.text, "literal", v)))
        elif t is Name:
            c = env.get(node.id)
            if c is None:  # pi, e (a given or step of that name is in env)
                c = symbol(syms.of(("const", node.id), node.id, "constant"))
            values.append(c)
        elif not ready:
            todo.append((node, True))
            todo.extend((c, False) for c in reversed(node.children()))
        elif t is Unary:
            v = values.pop()
            values.append(alg.neg(v) if node.op == "-" else v)
        elif t is BinOp:
            b, a = values.pop(), values.pop()
            op = node.op
            if not formula:
                _no_null(node, literals)
            if op == "+":
                values.append(alg.add(a, b))
            elif op == "-":
                values.append(alg.add(a, b, -1))
            elif op == "*":
                values.append(alg.mul(a, b))
            elif op == "/":
                values.append(alg.div(a, b))
            elif op == "**" and _small_int(node.right, b, literals):
                values.append(alg.power(a, int(node.right.value)))
            else:
                values.append(alg.atom({"//": "floordiv", "%": "mod", "**": "pow"}[op], [a, b], node))
        elif t is Call:
            n = len(node.args)
            args = values[-n:]
            del values[-n:]
            values.append(alg.atom(node.func, args, node))
    return values[0]


def _no_null(node: Any, literals: dict) -> None:
    """A literal 1 as a factor, divisor or exponent, or a literal 0 as a term, does nothing: it only moves a step
    off what it computes (`max(g1 * 1, g2)`)."""
    from prosfi.quant.expr import Num

    for side in (node.left, node.right):
        if isinstance(side, Num) and id(side) not in literals:
            if side.value == 1 and (node.op in ("*", "**") or (node.op == "/" and side is node.right)):
                raise Collapse(f"{'raises to' if node.op == '**' else 'multiplies by' if node.op == '*' else 'divides by'} "
                               "a literal 1, which does nothing")
            if side.value == 0 and node.op in ("+", "-"):
                raise Collapse("adds a literal 0, which does nothing")


def _small_int(right: Any, value: Composite, literals: dict) -> bool:
    """An exponent written as a small integer literal (`x ** 2`, `x ** -1`; not one read as a given)."""
    from prosfi.quant.expr import Num, Unary

    node, sign = right, 1
    if isinstance(node, Unary) and node.op == "-":
        node, sign = node.operand, -1
    return (isinstance(node, Num) and id(node) not in literals and node.value.denominator == 1
            and 0 < abs(node.value) <= MAX_POWER)


def compose_op(alg: Algebra, op: str, args: list[Composite]) -> Composite:
    """The composite of a primitive applied to its arguments' composites (an unknown primitive is an atom)."""
    from prosfi.quant.expr import parse_expr

    if op in VARIADIC:
        if op == "parallel_resistance":
            total = None
            for a in args:
                inv = alg.div(const(Fraction(1)), a)
                total = inv if total is None else alg.add(total, inv)
            return alg.div(const(Fraction(1)), total)
        total = args[0]
        for a in args[1:]:
            total = alg.add(total, a)
        return alg.div(total, const(Fraction(len(args)))) if op == "average" else total
    formula = FORMULAS.get(op)
    if formula is None:
        return alg.atom(op, args)
    from prosfi.quant.primitives import PRIMITIVES

    params = [p for p, _ in PRIMITIVES[op].params]
    env = dict(zip(params, args))
    env.setdefault("R", symbol(alg.syms.of(("const", "R"), "R", "constant")))
    return compose_expr(alg, parse_expr(formula), env, {}, formula=True)


__all__ = ["Algebra", "Collapse", "Composite", "FORMULAS", "Merge", "Symbols", "TooLarge", "compose_expr",
           "compose_op", "const", "reciprocal_symbol", "shifted_symbol", "symbol"]
