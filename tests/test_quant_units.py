"""Units: the registry's policies (money, counts, percent, temperatures) and conversions."""

from fractions import Fraction

import pytest

from prosfi.quant import QuantError, Value, format_value, parse_quantity, parse_unit
from prosfi.quant.units import DIMENSIONLESS, unit_info


def test_conversions_are_exact():
    assert parse_quantity("120 km").mag == 120000
    assert parse_quantity("1.5 h").mag == 5400
    assert parse_quantity("80 km/h").mag == Fraction(200, 9)
    assert parse_quantity("3 m/s") == parse_quantity("10.8 km/h")
    assert parse_quantity("1 mi").mag == Fraction("1609.344")
    assert parse_quantity("1 J") == parse_quantity("1 kg*m**2/s**2")


def test_money_is_its_own_dimension():
    usd = parse_quantity("$5")
    assert usd == parse_quantity("5 USD") == parse_quantity("5 dollars") == parse_quantity("500 cents")
    assert usd.dims != DIMENSIONLESS and usd.dims != parse_quantity("5 m").dims
    assert parse_quantity("$1,250.50").mag == Fraction("1250.5")


def test_counts_and_percent_are_dimensionless():
    assert parse_quantity("25%").mag == Fraction(1, 4) and parse_quantity("25%").dimensionless
    assert parse_quantity("25 percent") == parse_quantity("25%")
    assert parse_quantity("3 dozen").mag == 36 and parse_quantity("3 items").mag == 3
    assert parse_quantity("2 pairs").mag == 4
    for text in ("", "1", "dimensionless"):
        assert unit_info(text).dims == DIMENSIONLESS
    with pytest.raises(QuantError):
        parse_quantity("16 eggs")  # counting nouns are not units: the given is a plain number


def test_temperatures_convert_to_kelvin_at_the_edge():
    assert parse_quantity("20 degC").mag == Fraction("293.15")
    assert parse_quantity("20 °C") == parse_quantity("20 degC")
    assert parse_quantity("32 degF").mag == Fraction("273.15")
    assert parse_quantity("5 delta_degC") == parse_quantity("5 K")
    assert parse_quantity("3 degC/s") == parse_quantity("3 K/s")  # in a compound unit degC is a difference


def test_numbers_fractions_and_objects():
    assert parse_quantity("1/2").mag == Fraction(1, 2)
    assert parse_quantity("-3.5 m").mag == Fraction(-7, 2)
    assert parse_quantity(16).mag == 16 and parse_quantity(0.1).mag == Fraction(1, 10)
    assert parse_quantity({"value": "3", "unit": "m/s"}) == parse_quantity("3 m/s")
    assert parse_quantity({"value": 2.5}).mag == Fraction(5, 2)


@pytest.mark.parametrize("bad", ["", "abc", "3 foobars", "3 m m m )", True, None, [1], "1/0", float("nan"),
                                 float("inf"), {"unit": "m"}, {"value": "3 m", "unit": "s"}, "$3 m",
                                 "3% m", "3 m**9**9**9", {"value": {"value": "1"}}, {"value": True}, "3 m**1000", "3 " + "m*" * 50 + "m"])
def test_bad_quantities_raise_quant_errors(bad):
    with pytest.raises(QuantError):
        parse_quantity(bad)


def test_parse_unit_returns_pint_units():
    assert str(parse_unit("km/h").dimensionality) == "[length] / [time]"
    assert parse_unit("").dimensionless
    with pytest.raises(QuantError):
        parse_unit("flux capacitor")


def test_format_value_round_trips():
    for text in ("18", "3 m/s", "80 km/h", "0.25", "12.5 USD", "-4 J"):
        v = parse_quantity(text)
        assert parse_quantity(format_value(v)) == v, text
    assert format_value(Value(Fraction(1, 3))) == "0.3333333333"
    assert format_value(parse_quantity("2 kg") ) == "2 kg"
    assert format_value(parse_quantity("3 m/s"), "km/h") == "10.8 km/h"


def test_values_convert_back_to_pint():
    q = parse_quantity("80 km/h").to_pint()
    assert q.magnitude == 80 and str(q.units) == "kilometer / hour"
    assert parse_quantity("20 degC").to_pint().to("K").magnitude == Fraction("293.15")
    j = (parse_quantity("2 kg").mag * 9, parse_quantity("1 J").dims)
    assert Value(*j).to_pint().to("J").magnitude == 18


def test_registry_is_built_lazily_once():
    import prosfi.quant as q

    assert q.ureg is q.ureg
