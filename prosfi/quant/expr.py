"""Expressions: a small arithmetic grammar, parsed by our own recursive descent (never eval).

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "/" | "//" | "%") unary)*
    unary   := ("-" | "+") unary | power
    power   := atom ("**" unary)?              right-associative; -2**2 == -(2**2), 2**-1 allowed
    atom    := NUMBER | NAME | FUNC "(" expr ("," expr)* ")" | "(" expr ")"
    NUMBER  := 12 | 1.5 | .5 | 1.5e3           (no signs, no commas, no underscores)
    NAME    := [A-Za-z_][A-Za-z0-9_]*           (no "__", no Python keywords)
    FUNC    := a name in FUNCTIONS

`^` is read as `**`, and `×`, `÷`, `−` as `*`, `/`, `-`. Anything else (attribute access, subscripts,
strings, lambdas, comprehensions, keyword arguments, calls to other names, implicit multiplication)
is a QuantError of kind "error". Parsing is bounded before it starts: MAX_EXPR_CHARS characters,
MAX_DEPTH nesting levels, MAX_NODES nodes, MAX_LITERAL_DIGITS digits per literal ("bound").
"""

from __future__ import annotations

import functools
import keyword
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator

from prosfi.quant.errors import QuantError
from prosfi.quant.units import parse_number

MAX_EXPR_CHARS = 2000
MAX_DEPTH = 50  # nesting levels; ~5 Python frames each while parsing
MAX_NODES = 1000

# name -> (min arity, max arity); the evaluator implements each one.
FUNCTIONS: dict[str, tuple[int, int]] = {
    "sqrt": (1, 1), "cbrt": (1, 1), "exp": (1, 1), "log": (1, 2), "ln": (1, 1), "log10": (1, 1),
    "log2": (1, 1), "sin": (1, 1), "cos": (1, 1), "tan": (1, 1), "asin": (1, 1), "acos": (1, 1),
    "atan": (1, 1), "atan2": (2, 2), "hypot": (2, 2), "abs": (1, 1), "floor": (1, 1), "ceil": (1, 1),
    "round": (1, 2), "min": (1, 32), "max": (1, 32),
}

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\*\*|//|[-+*/%(),])
""", re.VERBOSE)
_TRANSLATE = str.maketrans({"×": "*", "÷": "/", "−": "-", "·": "*", "⋅": "*"})


class Expr:
    """A parsed expression node. `names()`: the names it reads; `literals()`: its numeric literal
    texts in order (for the chain's grounding rule); `text`: the source it came from (root only)."""

    __slots__ = ()

    def children(self) -> tuple["Expr", ...]:
        return ()

    def walk(self) -> Iterator["Expr"]:
        stack: list[Expr] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children()))

    def names(self) -> set[str]:
        return {n.id for n in self.walk() if isinstance(n, Name)}

    def literals(self) -> list[str]:
        return [n.text for n in self.walk() if isinstance(n, Num)]

    def calls(self) -> list[str]:
        return [n.func for n in self.walk() if isinstance(n, Call)]

    def size(self) -> int:
        return sum(1 for _ in self.walk())


@dataclass(frozen=True, slots=True)
class Num(Expr):
    text: str
    value: Fraction

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Name(Expr):
    id: str

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True, slots=True)
class Unary(Expr):
    op: str  # "-" or "+"
    operand: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,)

    def __str__(self) -> str:
        return f"{self.op}({self.operand})"


@dataclass(frozen=True, slots=True)
class BinOp(Expr):
    op: str  # + - * / // % **
    left: Expr
    right: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.left, self.right)

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True, slots=True)
class Call(Expr):
    func: str
    args: tuple[Expr, ...]

    def children(self) -> tuple[Expr, ...]:
        return self.args

    def __str__(self) -> str:
        return f"{self.func}({', '.join(map(str, self.args))})"


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            what = {".": "attribute access", "[": "subscripts", "'": "strings", '"': "strings",
                    ":": "slices or lambdas", "=": "assignment or comparison", "{": "braces",
                    "@": "matrix products", "<": "comparison", ">": "comparison", "!": "comparison",
                    "&": "bitwise operators", "|": "bitwise operators", "~": "bitwise operators"}.get(ch)
            raise QuantError(f"unexpected character {ch!r} at {pos}" + (f" (not allowed: {what})"
                                                                        if what else ""))
        kind = m.lastgroup
        if kind != "ws":
            out.append((kind, m.group(), pos))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0
        self.nodes = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise QuantError("unexpected end of expression" + (f" (expected {value!r})" if value else ""))
        if value is not None and tok[1] != value:
            raise QuantError(f"expected {value!r} at {tok[2]}, found {tok[1]!r}")
        self.i += 1
        return tok

    def node(self, n: Expr) -> Expr:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise QuantError(f"expression has more than {MAX_NODES} nodes", "bound")
        return n

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise QuantError(f"expression nested deeper than {MAX_DEPTH}", "bound")

    def parse(self) -> Expr:
        if not self.toks:
            raise QuantError("empty expression")
        e = self.expr()
        tok = self.peek()
        if tok is not None:
            hint = " (implicit multiplication is not allowed: write *)" if tok[0] in ("num", "name") or \
                tok[1] == "(" else ""
            raise QuantError(f"unexpected {tok[1]!r} at {tok[2]}{hint}")
        return e

    def expr(self) -> Expr:
        self.enter()
        left = self.term()
        while (tok := self.peek()) is not None and tok[1] in ("+", "-"):
            self.i += 1
            left = self.node(BinOp(tok[1], left, self.term()))
        self.depth -= 1
        return left

    def term(self) -> Expr:
        left = self.unary()
        while (tok := self.peek()) is not None and tok[1] in ("*", "/", "//", "%"):
            self.i += 1
            left = self.node(BinOp(tok[1], left, self.unary()))
        return left

    def unary(self) -> Expr:
        tok = self.peek()
        if tok is not None and tok[1] in ("-", "+"):
            self.i += 1
            self.enter()
            e = self.node(Unary(tok[1], self.unary()))
            self.depth -= 1
            return e
        return self.power()

    def power(self) -> Expr:
        base = self.atom()
        tok = self.peek()
        if tok is not None and tok[1] == "**":
            self.i += 1
            self.enter()
            e = self.node(BinOp("**", base, self.unary()))
            self.depth -= 1
            return e
        return base

    def atom(self) -> Expr:
        kind, value, pos = self.take()
        if kind == "num":
            return self.node(Num(value, parse_number(value)))
        if kind == "name":
            if "__" in value:
                raise QuantError(f"name {value!r}: dunder names are not allowed")
            if keyword.iskeyword(value) or keyword.issoftkeyword(value):
                raise QuantError(f"{value!r} is a Python keyword, not a name (lambdas, comprehensions and "
                                 "conditionals are not allowed)")
            nxt = self.peek()
            if nxt is not None and nxt[1] == "(":
                return self.call(value, pos)
            return self.node(Name(value))
        if value == "(":
            e = self.expr()
            self.take(")")
            return e
        raise QuantError(f"unexpected {value!r} at {pos}")

    def call(self, func: str, pos: int) -> Expr:
        arity = FUNCTIONS.get(func)
        if arity is None:
            raise QuantError(f"function {func!r} is not allowed (allowed: {', '.join(sorted(FUNCTIONS))})")
        self.take("(")
        args = [self.expr()]
        while (tok := self.peek()) is not None and tok[1] == ",":
            self.i += 1
            args.append(self.expr())
        self.take(")")
        lo, hi = arity
        if not lo <= len(args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise QuantError(f"{func}() takes {want} argument(s), got {len(args)}")
        return self.node(Call(func, tuple(args)))


def fraction_literals(text: str) -> list[tuple[str, Fraction]]:
    """The `a/b` literal pairs of an expression that denote the fraction a/b wherever they stand:
    "15*3/5" -> [("3/5", 3/5)] (15*3/5 == 15*(3/5)). Not after `/` or `**` (x/3/5 is x/15) and not
    before `**` (3/5**2 is 3/25). For the chain's grounding rule: a given "three-fifths" is 3/5."""
    try:
        toks = _tokens(text.translate(_TRANSLATE).replace("^", "**")) if len(text) <= MAX_EXPR_CHARS else []
    except QuantError:
        return []
    out = []
    for i in range(len(toks) - 2):
        a, op, b = toks[i], toks[i + 1], toks[i + 2]
        if a[0] != "num" or op[1] != "/" or b[0] != "num":
            continue
        before = toks[i - 1][1] if i > 0 else None
        after = toks[i + 3][1] if i + 3 < len(toks) else None
        if before in ("/", "**", "//", "%") or after in ("**",) or (i > 0 and toks[i - 1][0] != "op"):
            continue
        try:
            num, den = parse_number(a[1]), parse_number(b[1])
        except QuantError:
            continue
        if den != 0:
            out.append((f"{a[1]}/{b[1]}", num / den))
    return out


@functools.lru_cache(maxsize=8192)
def group_fractions(text: str) -> str:
    """`15*3/5` -> `15*(3/5)` for every literal pair that denotes a fraction wherever it stands (same value),
    so the pair is one node a given "three-fifths" can be read into."""
    pairs = fraction_literals(text)
    if not pairs:
        return text
    for pair, _ in pairs:
        a, b = pair.split("/")
        text = re.sub(rf"(?<![\w.]){re.escape(a)}\s*/\s*{re.escape(b)}(?![\w.])", f"({a}/{b})", text, count=1)
    return text



def _parse_cached(text: str) -> Expr:
    try:
        return _Parser(text.translate(_TRANSLATE).replace("^", "**")).parse()
    except RecursionError:  # only when the caller's own stack is already nearly full
        raise QuantError("expression nested too deeply for the remaining stack", "bound") from None


def parse_expr(text: str) -> Expr:
    """The AST of an expression text; QuantError ("error" outside the grammar, "bound" too big)."""
    if not isinstance(text, str):
        raise QuantError(f"an expression must be a string, not {type(text).__name__}")
    if len(text) > MAX_EXPR_CHARS:
        raise QuantError(f"expression longer than {MAX_EXPR_CHARS} characters", "bound")
    try:
        return _parse_cached(text)
    except QuantError as exc:
        if exc.kind == "error" and re.search(r"%\s*(?:$|[)+\-*/,])", text):
            raise QuantError(f"{exc} (`%` is the remainder operator here; write a percentage as "
                             "x / 100)") from None
        raise


__all__ = ["Expr", "Num", "Name", "Unary", "BinOp", "Call", "FUNCTIONS", "parse_expr", "fraction_literals", "group_fractions",
           "MAX_EXPR_CHARS",
           "MAX_DEPTH", "MAX_NODES"]
