"""The expression grammar: what parses, what it reads, what is refused (never evaluated)."""

from fractions import Fraction

import pytest

from prosfi.quant import FUNCTIONS, QuantError, evaluate, parse_expr, parse_quantity
from prosfi.quant.expr import MAX_DEPTH, BinOp, Call, Name, Num, Unary


def val(text, **env):
    return evaluate(parse_expr(text), {k: parse_quantity(v) for k, v in env.items()})


def test_precedence_and_associativity_follow_python():
    for text in ("1 + 2 * 3", "2 ** 3 ** 2", "-2 ** 2", "2 ** -1", "7 // 2", "7 % 3", "(1 + 2) * 3",
                 "10 - 4 - 3", "100 / 10 / 5", "2 * -3", "--4", "+5"):
        assert val(text).mag == Fraction(eval(text)), text  # eval of a fixed, trusted literal


def test_exact_rational_arithmetic():
    assert val("1/3 + 1/6").mag == Fraction(1, 2)
    assert val("0.1 + 0.2").mag == Fraction(3, 10)
    assert val("16 - 3 - 4").mag == 9
    assert val("1.5e3").mag == 1500


def test_floats_for_transcendental_functions():
    assert val("sqrt(16)").mag == 4 and val("sqrt(16)").exact
    assert abs(val("sqrt(2)").mag - 2 ** 0.5) < 1e-15
    assert abs(val("exp(1) - e").mag) < 1e-15
    assert abs(val("sin(pi / 6)").mag - 0.5) < 1e-12
    assert val("log(8, 2)").mag == pytest.approx(3)
    assert val("max(3, 7, 5)").mag == 7 and val("min(3, 7, 5)").mag == 3
    assert val("round(2.5)").mag == 3 and val("round(-2.5)").mag == -3
    assert val("round(2.345, 2)").mag == Fraction(235, 100)
    assert val("floor(7 / 2)").mag == 3 and val("ceil(7 / 2)").mag == 4 and val("abs(-3)").mag == 3


def test_names_and_literals_are_reported_in_order():
    e = parse_expr("g1 * 60 + s2 / 100 - sqrt(g1)")
    assert e.names() == {"g1", "s2"}
    assert e.literals() == ["60", "100"]
    assert e.calls() == ["sqrt"]
    assert isinstance(e, BinOp) and isinstance(parse_expr("x"), Name) and isinstance(parse_expr("1"), Num)
    assert isinstance(parse_expr("-x"), Unary) and isinstance(parse_expr("abs(x)"), Call)


def test_unicode_operators_and_caret():
    assert val("2 × 3 ÷ 4 − 1").mag == Fraction(1, 2)
    assert val("2^3").mag == 8


@pytest.mark.parametrize("text", [
    "__import__('os')", "x.real", "().__class__", "x[0]", "'a'", "\"a\"", "lambda: 1", "[i for i in x]",
    "{1: 2}", "f(1)", "open('x')", "eval('1')", "exec", "x if y else z", "1 < 2", "x == 1", "a = 1",
    "2 3", "2(3)", "x y", "sqrt", "sqrt()", "sqrt(1, 2)", "min()", "1 +", "(1", "1)", "", "   ", "1,2",
    "max(x=1)", "1 & 2", "~1", "not x", "x and y", "__x__", "a__b", "yield", "await x", "@x", "1_000",
    "0x10", "1j", "∞", "print(1)",
])
def test_outside_the_grammar_is_an_error(text):
    with pytest.raises(QuantError) as info:
        val(text, x="1", y="2", z="3", a="1", b="2")
    assert info.value.kind == "error"


def test_unknown_name_is_an_error():
    with pytest.raises(QuantError) as info:
        val("g9 + 1", g1="2")
    assert info.value.kind == "error" and "g9" in str(info.value)


def test_function_set_has_the_issue_minimum():
    issue = {"sqrt", "exp", "log", "sin", "cos", "tan", "abs", "floor", "ceil", "min", "max", "round"}
    assert issue <= set(FUNCTIONS)


def test_depth_limit_is_a_bound_not_a_recursion_error():
    with pytest.raises(QuantError) as info:
        parse_expr("(" * (MAX_DEPTH + 5) + "1" + ")" * (MAX_DEPTH + 5))
    assert info.value.kind == "bound"
    with pytest.raises(QuantError) as info:
        parse_expr("-" * (MAX_DEPTH + 5) + "1")
    assert info.value.kind == "bound"
    assert val("(" * 40 + "1" + ")" * 40).mag == 1


def test_long_chains_evaluate_without_recursion_even_from_a_deep_stack():
    chain = "+".join(["1"] * 499)

    def deep(n):
        return val(chain) if n == 0 else deep(n - 1)

    assert deep(800).mag == 499


def test_fraction_literals_only_where_a_over_b_is_the_fraction():
    from prosfi.quant.expr import fraction_literals

    assert fraction_literals("15*3/5") == [("3/5", Fraction(3, 5))]
    assert fraction_literals("3/4*120 - 1/2") == [("3/4", Fraction(3, 4)), ("1/2", Fraction(1, 2))]
    assert fraction_literals("(2/3) * g1") == [("2/3", Fraction(2, 3))]
    for text in ("x/3/5", "2**3/5", "3/5**2", "g1 / 5", "3 / g2", "1/0", "((", "7 // 2/3"):
        assert fraction_literals(text) == [], text
    for text, _ in fraction_literals("g1 * 3/5 + 2/3 * g2"):  # what it says holds: the pair is the fraction
        assert val(f"g1 * ({text})", g1="7").mag == val(f"g1 * {text}", g1="7").mag
