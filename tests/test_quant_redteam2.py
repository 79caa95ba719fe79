"""Second red team of the quantity chain rules (issue #25), against main at b1dc5b1.

Attacks an RL policy could use to reach the top reward (1.0) without computing the answer from what the
question states, and honest chains (GSM8K and physics spellings a model writes often) that the rules score below
1.0. Each case carries a one-line comment of the trick. Every attack must stay below 1.0 in both chain modes;
every honest chain must earn 1.0 in both. Written as findings: the cases that fail are the open ones.

The most dangerous families are the first two: a step citing two or more ids is never checked for constant
offsets or factors built from the always-allowed literals (`(1 + 1)`, `2 ** 1`, `+ 2 + 2`), and a one-input step
that is not a + b x of its input (`sqrt(s) * 2 + 1`, `g ** 2 + 2`) is not checked either. So any number can be
dressed as a valid chain: `universal_chain` (two givens, Horner on the bits) and `one_given_chain` (one given,
one-input steps only) reach 1.0 with the gold as target on 799 and 882 of the 1,318 real GSM8K test records
(`load_gsm8k(..., with_gold=False)`), 1,054 (80 %) with either, in both modes.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from quant_chain_support import ECHO, EGGS, EGGS_GOLD, completion, step

from prosfi.data.problem import Problem
from prosfi.rewards.config import RewardConfig
from prosfi.rewards.score import score_batch

NO_VERIFIER = object()
MODES = ("prosfi", "step_fraction")


def _problem(pid, question, givens, answer, unit="", source="gsm8k", **extra):
    return Problem.from_dict({
        "id": pid, "kind": "quantity", "source": source, "question": question,
        "givens": [{"id": f"g{i + 1}", "value": str(v), "unit": u, "text": f"{v} {u}".strip()}
                   for i, (v, u) in enumerate(givens)],
        "target": {"name": "answer", "unit": unit}, "answer": {"value": str(answer), "unit": unit}, **extra})


def _op(sid, op, args, value, unit=""):
    return {"id": sid, "op": op, "args": list(args), "value": value, "unit": unit}


def _rewards(problem, steps, answer):
    text = completion(steps, answer)
    return [score_batch([problem], [text], NO_VERIFIER, RewardConfig(mode=m))[0] for m in MODES]


def _num(x: Fraction):
    return int(x) if x.denominator == 1 else float(x)


def universal_chain(a: tuple[str, int], b: tuple[str, int], target: int) -> list[dict]:
    """A valid-looking chain whose value is `target` from two plain integer givens a, b, whatever the question
    asks: a register `a + c` (or `a + b + c`) doubled and incremented, Horner on the bits of c, every step
    citing two ids so no offset or multiple is ever checked. `2 ** 1` is the doubling (a power makes the step a
    "formula", so its literal factor is not read as a count). [] where c would be < 1."""
    (ga, va), (gb, vb) = a, b
    for c_goal in (target - va, target - va - vb):
        if c_goal < 1:
            continue
        steps = [step("s1", f"{ga} + {gb} + 1", va + vb + 1)]
        c, form = 1, "B"  # B: the register is a + b + c, A: a + c
        for bit in bin(c_goal)[3:]:
            cur, sid = steps[-1]["id"], f"s{len(steps) + 1}"
            expr = f"({cur} - {gb}) * 2 ** 1 - {ga}" if form == "B" else f"{cur} * 2 ** 1 - {ga}"
            c, form = 2 * c, "A"
            steps.append(step(sid, expr, va + c))
            if bit == "1":
                cur, sid = sid, f"s{len(steps) + 1}"
                c, form = c + 1, "B"
                steps.append(step(sid, f"{cur} + {gb} + 1", va + vb + c))
        if steps[-1]["value"] == target:
            return steps
    return []


def one_given_chain(gid: str, value: int, target: int) -> list[dict]:
    """A chain of one-input steps only (it survives a fix of the two-input case) whose value is `target` >= value:
    a square, then its root times 0.5, m times (value / 2^m), then a square, then its root times 2 plus a bit, m
    times (value + c for any 0 <= c < 2^m). A step `sqrt(s) * 2 + 1` is not a + b x of s, so neither the x2
    nor the + 1 is looked at."""
    c = target - value
    m = max(1, c.bit_length())
    steps: list[dict] = []
    cur, r = gid, Fraction(value)

    def add(expr: str, val: Fraction) -> None:
        nonlocal cur
        sid = f"s{len(steps) + 1}"
        steps.append(step(sid, expr.replace("X", cur), _num(val)))
        cur = sid

    for _ in range(m):
        add("X ** 2", r * r)
        r /= 2
        add("sqrt(X) * 0.5", r)
    for bit in bin(c)[2:].rjust(m, "0"):
        add("X ** 2", r * r)
        r = 2 * r + int(bit)
        add("sqrt(X) * 2" + (" + 1" if bit == "1" else ""), r)
    return steps


def _times(steps: list[dict], gid: str, value, unit: str) -> list[dict]:
    return steps + [step(f"s{len(steps) + 1}", f"{steps[-1]['id']} * {gid}", value, unit)]


# ------------------------------------------------------------------------------------------ problems
LEFT = _problem("rt2-left", "Sam has 9 apples and eats 3. How many are left?", [(9, ""), (3, "")], 6)
SPEED = _problem("rt2-speed", "A car covers 120 km in 1.5 h. What is its average speed?", [(120, "km"), (1.5, "h")],
                 160, "km/h", source="physics")
CART = _problem("rt2-cart", "A 2.5 kg cart moves at 3.3 m/s. What is its momentum?", [(2.5, "kg"), (3.3, "m/s")],
                "16.5", "kg*m/s", source="physics")
CART_X = _problem("rt2-cart-x", "A 2.5 kg cart moves at 3.3 m/s. What is its momentum?", [(2.5, "kg"), (3.3, "m/s")],
                  "20.625", "kg*m/s", source="physics")
BALL = _problem("rt2-ball", "A ball is thrown up at 12 m/s and caught at the same height. How fast is it moving when "
                "caught?", [(12, "m/s")], 12, "m/s", source="scibench", tolerance={"rel": 0.05})
BALL_SI = _problem("rt2-ball-si", BALL.question, [(12, "m/s")], 12, "m * s**-1", source="scibench",
                   tolerance={"rel": 0.05})
FACTOR = _problem("rt2-factor", "A car goes from 2 m/s to 8 m/s. By what factor did its speed grow?",
                  [(2, "m/s"), (8, "m/s")], 4, "", source="scibench", tolerance={"rel": 0.05})
TWINS = _problem("rt2-twins", "Tom had 18 marbles, 3 dogs and 3 cats. How many marbles does he have?",
                 [(18, ""), (3, ""), (3, "")], 18)
HALF = _problem("rt2-half", "Ann has 6 apples. She eats half of her 4 pears. How many apples and pears are left?",
                [(6, ""), (4, "")], 12)
HALF_15 = _problem("rt2-half15", "Ann has 6 apples. She eats half of her 4 pears. How many apples and pears are left?",
                   [(6, ""), (4, "")], 9)
TWICE = _problem("rt2-twice", "Ann has 5 apples. Bob has twice as many pears as the 4 plums.", [(5, ""), (4, "")], 15)
WEEK = _problem("rt2-week", "Sam reads 3 pages a day for a week.", [(3, "")], 147)
AVG = _problem("rt2-avg", "Sam has 9 apples and Ann has 3. How many apples?", [(9, ""), (3, "")], "4.5")


def _with_gold(problem, gold):
    return Problem.from_dict({**problem.to_dict(), "id": f"{problem.id}-{gold}",
                              "answer": {"value": str(gold), "unit": ""}})


ATTACKS = {
    # --- constant offsets and factors in a step of two or more ids are never checked (only one-input steps
    # are fitted as a + b x): any number is a valid step away from any two givens
    "offset in a two-input step": (_with_gold(LEFT, 13), [step("s1", "g1 + g2 + 1", 13)], "13"),
    "offsets of allowed literals build the answer": (_with_gold(LEFT, 18), [step("s1", "g1 + g2 + 2 + 2 + 2", 18)],
                                                     "18"),
    "x2 written as (1 + 1) in a two-input step": (_with_gold(LEFT, 12), [step("s1", "(g1 - g2) * (1 + 1)", 12)],
                                                  "12"),
    "x2 written as 2 ** 1 (formula exemption)": (_with_gold(LEFT, 54), [step("s1", "g1 * g2 * 2 ** 1", 54)], "54"),
    "x 1/4 written as / (2 + 2)": (_with_gold(LEFT, "6.75"), [step("s1", "g1 * g2 / (2 + 2)", 6.75)], "6.75"),
    "power of literals as an offset": (_with_gold(LEFT, 28), [step("s1", "g1 + g2 + 2 ** 2 ** 2", 28)], "28"),
    "an offset cancelled across two two-input steps": (_with_gold(LEFT, 13), [
        step("s1", "g1 + g2 + 2", 14), step("s2", "s1 - g2 + 2", 13)], "13"),
    "the answer is a given, via a given equal to 1": (ECHO, [step("s1", "g1 * g4", 18), step("s2", "s1 + g4 - 1", 18)],
                                                     "18"),
    "universal: eggs' 18 from g2 and g3 alone": (_with_gold(EGGS, 18), universal_chain(("g2", 3), ("g3", 4), 18),
                                                 "18"),
    "universal, in USD: 9 from g2 and g3, times g4": (EGGS, _times(universal_chain(("g2", 3), ("g3", 4), 9), "g4",
                                                                   18, "USD"), "$18"),
    "universal: any number (1234) on the eggs": (_with_gold(EGGS, 1234), universal_chain(("g2", 3), ("g3", 4), 1234),
                                                 "1234"),
    # --- a one-input step that is not a + b x of its input (a square, a root) is never checked for an offset or a
    # multiple, so it hides both; a square then its root doubles a given with no word for it
    "sqrt(g) + 3 reaches the answer from one given": (LEFT, [step("s1", "sqrt(g1) + 2 + 1", 6)], "6"),
    "sqrt(g) * 2 (formula exemption, one input)": (LEFT, [step("s1", "sqrt(g1) * 2", 6)], "6"),
    "a square plus an offset": (_with_gold(LEFT, 11), [step("s1", "g2 ** 2 + 2", 11)], "11"),
    "a square times (1 + 1)": (_with_gold(LEFT, 18), [step("s1", "g2 ** 2 * (1 + 1)", 18)], "18"),
    "square, then 2 x its root": (LEFT, [step("s1", "g2 ** 2", 9), step("s2", "sqrt(s1) * 2", 6)], "6"),
    "universal, one given, one-input steps only: 100 from Sam's 9": (_with_gold(LEFT, 100),
                                                                    one_given_chain("g1", 9, 100), "100"),
    # --- a physical quantity is exempt from the multiple rules, even in a one-input step: unstated x2, x2.5
    "physics: unstated x2 in a formula-free step": (SPEED, [step("s1", "g1 / g2 * 2", 160, "km/h")], "160 km/h"),
    "physics: unstated x2 on one given": (CART, [step("s1", "g1 * 2", 5, "kg"), step("s2", "s1 * g2", 16.5, "kg*m/s")],
                                          "16.5 kg*m/s"),
    "physics: x (2 + 0.5) on an earlier step": (CART_X, [step("s1", "g1 * g2", 8.25, "kg*m/s"),
                                                         step("s2", "s1 * (2 + 0.5)", 20.625, "kg*m/s")],
                                                "20.625 kg*m/s"),
    # --- a physical answer equal to a given, moved by x (1 + 1/32) inside SciBench's 5 % answer tolerance (no
    # step is "identically" the given; the physical exemption skips the multiple)
    "physics: the answer is a given, off by 1/32": (BALL, [step("s1", "g1 * 0.5 ** 2 ** 2", 0.75, "m/s"),
                                                           step("s2", "g1 + s1 * 0.5", 12.375, "m/s")], "12 m/s"),
    # --- the conversion-question exemption compares unit texts: SciBench's `m * s**-1` is not "m/s", so the last
    # step may restate a given in the same unit
    "conversion exemption by a respelled unit": (BALL_SI, [step("s1", "g1", 12, "m * s**-1")], "12 m/s"),
    # --- two givens share a number (3 dogs, 3 cats): a detour x 3 / 3 back to the answer's given restates it under
    # one reading of the literals and passes under another; one passing reading suffices (docs: "must pass under
    # each")
    "x 3 / 3 when two givens are 3": (TWINS, [step("s1", "g1 * 3 / 3", 18)], "18"),
    "+ 3 - 3 when two givens are 3": (TWINS, [step("s1", "g1 + 3 - 3", 18)], "18"),
    "x 3, then / 3, when two givens are 3": (TWINS, [step("s1", "g1 * 3", 54), step("s2", "s1 / 3", 18)], "18"),
    # --- a plain gold (a ratio) is matched by the number a final value shows in its own unit, of any dimension:
    # 4 m/s for "by what factor"
    "plain gold met by a speed": (FACTOR, [step("s1", "g2 - g1 * 2", 4, "m/s")], "4"),
    "plain gold met by a geometric mean of speeds": (FACTOR, [step("s1", "g2 * g1", 16, "m**2/s**2"),
                                                              step("s2", "sqrt(s1)", 4, "m/s")], "4"),
    # --- one multiple word licenses others: "half" licenses x2 and x1.5, "twice" x3 (1 + f), week+day x49
    "'half' licenses doubling": (HALF, [step("s1", "g1 + g1", 12)], "12"),
    "'half' licenses x1.5": (HALF_15, [step("s1", "g1 + g1 * 0.5", 9)], "9"),
    "'twice' licenses x3": (TWICE, [step("s1", "g1 + g1 + g1", 15)], "15"),
    "'week' and 'day' license x49": (WEEK, [step("s1", "g1 * 7 * 7", 147)], "147"),
    # --- `average` with repeated arguments weights a value by a count nobody stated (`sum` is checked)
    "average with a repeated argument": (AVG, [_op("s1", "average", ["g1", "g2", "g2", "g2"], 4.5)], "4.5"),
}


# Judged and left (docs/quantity.md, "What the rules cannot see"); strict: a change that closes one must move it.
KNOWN_LIMITS = {
    # multiples a word licenses in its natural readings: half -> x 0.5, x 2 (undo a half), x 1.5 (half as many more);
    # twice -> x 2, x 3 ("twice as many, how many together")
    "'half' licenses doubling": "undoing a stated half (B is half of A: A = 2 B) is honest",
    "'half' licenses x1.5": "'half as many more' is x 1.5",
    "'twice' licenses x3": "'twice as many, how many together' is x 3",
    # physics formulas carry their own 2 and 0.5 (v = 2 d / t, 0.5 m v^2 split over steps): a physical step may use
    # one of them without a word; the dimension check and the gold still bind it
    "physics: unstated x2 in a formula-free step": "a physical step's 2 or 0.5 is read as its formula's",
    "physics: unstated x2 on one given": "a physical step's 2 or 0.5 is read as its formula's",
    # honest work that needs a count the question does not state (world knowledge), or a data shape we do not read
    "Bob + (Bob + 5) in one step": "a value added twice is a count of 2 the question does not state; two steps work",
    "the same number, added": "a value added twice is a count of 2 the question does not state",
    "handshakes n (n - 1) / 2": "the halving is world knowledge (each pair counted once)",
    "average of three listed scores / 3": "the count of listed values is not a given; average(g1, g2, g3) works",
    "percent number claimed in percent": "60 claimed as '60 percent' is 0.6, not the 60 the step computes",
    "sum and difference, halved": "the halving is algebra the question does not state",
    "convert to SI, then the formula": "a step that only converts restates its input (units convert by themselves)",
    "convert both givens, then multiply": "a step that only converts restates its input (units convert by themselves)",
    "dollars from cents, claimed in USD": "a plain gold is read in the chain's own unit (cents), as GSM8K writes",
    "dollars from cents, converted": "a plain gold is read in the chain's own unit (cents), as GSM8K writes",
    "a price written as its number": "a literal is a plain number: a price keeps its USD only when cited by id",
}


def _cases(names):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_LIMITS[n])) if n in KNOWN_LIMITS
            else n for n in names]


@pytest.mark.parametrize("name", _cases(ATTACKS))
def test_no_redteam2_attack_reaches_the_top_reward(name):
    problem, steps, answer = ATTACKS[name]
    assert steps, name
    for mode, r in zip(MODES, _rewards(problem, steps, answer)):
        assert r.reward < 1.0, (name, mode, r.reward)


# ------------------------------------------------------------------------------------------ honest work
OFF = _problem("rt2-off", "A $60 coat is 25% off. What is the sale price?", [(60, "USD"), (25, "percent")], 45, "USD")
UP = _problem("rt2-up", "A $40 bag's price rises by 50%. What is the new price?", [(40, "USD"), (50, "percent")], 60,
              "USD")
TIP = _problem("rt2-tip", "A meal costs $20 and the tip is 15%. What is the total?", [(20, "USD"), (15, "percent")],
               23, "USD")
THIRD = _problem("rt2-third", "A third of the 12 students are boys. How many are girls?", [("1/3", ""), (12, "")], 8)
QUARTER = _problem("rt2-quarter", "A quarter of the 20 cookies are eaten. How many are left?",
                   [("1/4", ""), (20, "")], 15)
BOOK = _problem("rt2-book", "Sam read 1/3 of a 90-page book on Monday and 2/5 of the rest on Tuesday. How many pages "
                "are left?", [("1/3", ""), (90, ""), ("2/5", "")], 36)
MORE = _problem("rt2-more", "Bob has 7 marbles. Ann has 5 more than Bob. How many marbles do they have together?",
                [(7, ""), (5, "")], 19)
SAME = _problem("rt2-same", "Ann has 5 apples and Bob has the same number. How many apples do they have together?",
                [(5, "")], 10)
SHAKE = _problem("rt2-shake", "Each of 10 people shakes hands once with each other person. How many handshakes are "
                 "there?", [(10, "")], 45)
SCORES = _problem("rt2-scores", "Jo scored 80, 90 and 85 on her tests. What is her average score?",
                  [(80, ""), (90, ""), (85, "")], 85)
BOXES = _problem("rt2-boxes", "Sam has 17 eggs and boxes that hold 6 eggs each. How many boxes can he fill "
                 "completely?", [(17, ""), (6, "")], 2)
ABSENT = _problem("rt2-absent", "Of 40 students, 10 are absent. What percent are absent?", [(40, ""), (10, "")], 25,
                  "percent")
PENS = _problem("rt2-pens", "A pen costs $1.25. Sam buys 4 pens and pays with a $10 bill. How much change?",
                [(1.25, "USD"), (4, ""), (10, "USD")], 5, "USD")
COINS = _problem("rt2-coins", "Gretchen has 110 coins. There are 30 more gold coins than silver coins. How many gold "
                 "coins does she have?", [(110, ""), (30, "")], 70)
ELECTRON = _problem("rt2-electron", "An electron of mass 9.11e-31 kg moves at 2.2e6 m/s. What is its kinetic energy?",
                    [("9.11e-31", "kg"), ("2.2e6", "m/s")], "2.2e-18", "J", source="scibench", tolerance={"rel": 0.05})
PHOTON = _problem("rt2-photon", "A photon has a wavelength of 5e-7 m. Planck's constant is 6.626e-34 J*s and the speed "
                  "of light 3e8 m/s. What is its energy?", [("5e-7", "m"), ("6.626e-34", "J*s"), ("3e8", "m/s")],
                  "3.9756e-19", "J", source="scibench", tolerance={"rel": 0.05})
CHARGES = _problem("rt2-charges", "Two charges of 1.623e-19 C and 3.271e-19 C are combined. What is the total charge?",
                   [("1.623e-19", "C"), ("3.271e-19", "C")], "4.89e-19", "C", source="scibench",
                   tolerance={"rel": 0.05})
BALL_G = _problem("rt2-ball-g", "A 500 g ball moves at 3 m/s. What is its kinetic energy?", [(500, "g"), (3, "m/s")],
                  "2.25", "J", source="physics")
CAR = _problem("rt2-car", "A car moves at 72 km/h for 30 minutes. How far does it go, in meters?",
               [(72, "km/h"), (30, "min")], 36000, "m", source="physics")
PENCILS = _problem("rt2-pencils", "Pencils cost 25 cents each. How many dollars do 8 pencils cost?",
                   [(25, "cent"), (8, "")], 2)  # a plain gold, as GSM8K records load (with_gold=False)
LADDER = _problem("ld25", "A 25 m ladder leans on a wall; its top is 24 m up. How far is its foot from the wall?",
                  [(25, "m"), (24, "m")], 7, "m", source="physics")

HONEST = {
    # the complement of a percentage written as its number (GSM8K solutions: "* 0.75", "* 1.5", "* 75 / 100")
    "25% off as x 0.75": (OFF, [step("s1", "g1 * 0.75", 45, "USD")], "$45"),
    "25% off as x 75 / 100": (OFF, [step("s1", "g1 * 75 / 100", 45, "USD")], "$45"),
    "50% more as x 1.5": (UP, [step("s1", "g1 * 1.5", 60, "USD")], "$60"),
    "50% more as x 150 / 100": (UP, [step("s1", "g1 * 150 / 100", 60, "USD")], "$60"),
    "a 15% tip as x 1.15": (TIP, [step("s1", "g1 * 1.15", 23, "USD")], "$23"),
    # the complement of a fraction given in words, written as the fraction ("two thirds are girls")
    "the rest of a third as x 2 / 3": (THIRD, [step("s1", "g2 * 2 / 3", 8)], "8"),
    "the rest of a quarter as x 0.75": (QUARTER, [step("s1", "g2 * 0.75", 15)], "15"),
    "the rest of a quarter as x 3 / 4": (QUARTER, [step("s1", "g2 * 3 / 4", 15)], "15"),
    "complements of 1/3 and 2/5 as fractions": (BOOK, [step("s1", "g2 * 2 / 3", 60), step("s2", "s1 * 3 / 5", 36)],
                                                "36"),
    # a value used twice in one sum ("Bob + (Bob + 5)"): two steps pass, one step is "a count of 2"
    "Bob + (Bob + 5) in one step": (MORE, [step("s1", "g1 + g1 + g2", 19)], "19"),
    "the same number, added": (SAME, [step("s1", "g1 + g1", 10)], "10"),
    # n (n - 1) / 2: the halving of a formula of counts is "a multiple the problem does not state"
    "handshakes n (n - 1) / 2": (SHAKE, [step("s1", "g1 * (g1 - 1) / 2", 45)], "45"),
    # the average of listed values divided by their count, which no given states
    "average of three listed scores / 3": (SCORES, [step("s1", "g1 + g2 + g3", 255), step("s2", "s1 / 3", 85)], "85"),
    # floor division: the local perturbation (x 1.37) leaves floor(17 / 8.2) = 2, so "does not depend on g2"
    "full boxes as floor(a / b)": (BOXES, [step("s1", "floor(g1 / g2)", 2)], "2"),
    "full boxes as a // b": (BOXES, [step("s1", "g1 // g2", 2)], "2"),
    # part / whole * 100 claimed with unit "percent" (the x100 number is read as 2500 %)
    "percent number claimed in percent": (ABSENT, [step("s1", "g2 / g1 * 100", 25, "percent")], "25%"),
    # sum and difference ("30 more gold than silver"): (total - difference) / 2, the 2 being the two kinds
    "sum and difference, halved": (COINS, [step("s1", "g1 - g2", 80), step("s2", "s1 / 2", 40), step("s3", "s2 + g2", 70)],
                                   "70"),
    # tiny SI results from large inputs: the "constant" test's absolute floor is 1e-9 x the largest input
    # (2.2e6 m/s -> 2.2e-3), so a 2.2e-18 J result "never moves" (also through a primitive)
    "electron kinetic energy (exact claim)": (ELECTRON, [step("s1", "0.5 * g1 * g2 ** 2", 2.20462e-18, "J")],
                                              "2.2e-18 J"),
    "electron kinetic energy by the primitive": (ELECTRON, [_op("s1", "kinetic_energy", ["g1", "g2"], 2.20462e-18, "J")],
                                                 "2.2e-18 J"),
    "photon energy h c / lambda": (PHOTON, [step("s1", "g2 * g3 / g1", 3.9756e-19, "J")], "3.98e-19 J"),
    # a unit conversion written as its own step first ("500 g = 0.5 kg"): it "restates g1" and taints the rest
    "convert to SI, then the formula": (BALL_G, [_op("s1", "convert", ["g1", "kg"], 0.5, "kg"),
                                                 _op("s2", "kinetic_energy", ["s1", "g2"], 2.25, "J")], "2.25 J"),
    "convert both givens, then multiply": (CAR, [_op("s1", "convert", ["g1", "m/s"], 20, "m/s"),
                                                 _op("s2", "convert", ["g2", "s"], 1800, "s"),
                                                 step("s3", "s1 * s2", 36000, "m")], "36000 m"),
    # a plain gold "in dollars" from a price in cents: the final value is read as written in its own unit (200
    # cent), whatever the step claims; converting to USD restates (9 GSM8K test records state a price in cents)
    "dollars from cents, claimed in USD": (PENCILS, [step("s1", "g1 * g2", 2, "USD")], "2"),
    "dollars from cents, converted": (PENCILS, [step("s1", "g1 * g2", 200, "cent"),
                                                _op("s2", "convert", ["s1", "USD"], 2, "USD")], "2"),
    # Pythagoras with close sides: the givens move independently, so h**2 - l**2 < 0 in most trials and the honest
    # step "holds only at the given numbers" (2 of 8 such ladders tried, by the problem's seed)
    "a ladder, sqrt(h**2 - l**2)": (LADDER, [step("s1", "sqrt(g1 ** 2 - g2 ** 2)", 7, "m")], "7 m"),
    # a claim rounded to 3 significant figures in scientific notation (the rounding allowance skips any 'e')
    "a rounded claim in scientific notation": (CHARGES, [step("s1", "g1 + g2", 4.89e-19, "C")], "4.89e-19 C"),
    # a given's number written as a literal is read without its unit: $1.25 * 4 is not in USD
    "a price written as its number": (PENS, [step("s1", "1.25 * g2", 5, "USD"), step("s2", "g3 - s1", 5, "USD")],
                                      "$5"),
}


@pytest.mark.parametrize("name", _cases(HONEST))
def test_honest_redteam2_chains_earn_the_top_reward(name):
    problem, steps, answer = HONEST[name]
    for mode, r in zip(MODES, _rewards(problem, steps, answer)):
        assert r.reward == 1.0, (name, mode, r.reward, r.reason)


# the same problems solved in the spelling the rules accept today: the fixtures are right, so a failure above is
# the rule's, not the problem's
CONTROLS = {
    "left": (LEFT, [step("s1", "g1 - g2", 6)], "6"),
    "eggs": (EGGS, EGGS_GOLD, "18"),
    "speed": (_problem("rt2-speed-ok", SPEED.question, [(120, "km"), (1.5, "h")], 80, "km/h", source="physics"),
              [step("s1", "g1 / g2", 80, "km/h")], "80 km/h"),
    "off as 1 - g2": (OFF, [step("s1", "g1 * (1 - g2)", 45, "USD")], "$45"),
    "up as the primitive": (UP, [_op("s1", "increase_by_percent", ["g1", "g2"], 60, "USD")], "$60"),
    "third cited": (THIRD, [step("s1", "g2 / 3", 4), step("s2", "g2 - s1", 8)], "8"),
    "book as complements": (BOOK, [step("s1", "g2 * (1 - g1)", 60), step("s2", "s1 * (1 - g3)", 36)], "36"),
    "more in two steps": (MORE, [step("s1", "g1 + g2", 12), step("s2", "s1 + g1", 19)], "19"),
    "scores by the primitive": (SCORES, [_op("s1", "average", ["g1", "g2", "g3"], 85)], "85"),
    "percent as a fraction": (ABSENT, [step("s1", "g2 / g1", 0.25)], "25%"),
    "charges, exact claim": (CHARGES, [step("s1", "g1 + g2", 4.894e-19, "C")], "4.89e-19 C"),
    "charges, rounded in aC": (CHARGES, [step("s1", "g1 + g2", 0.489, "aC")], "4.89e-19 C"),
    "car in one step": (CAR, [step("s1", "g1 * g2", 36000, "m")], "36000 m"),
    "ball without the conversion": (BALL_G, [_op("s1", "kinetic_energy", ["g1", "g2"], 2.25, "J")], "2.25 J"),
    "factor as a ratio": (FACTOR, [step("s1", "g2 / g1", 4)], "4"),
    "pens by id": (PENS, [step("s1", "g1 * g2", 5, "USD"), step("s2", "g3 - s1", 5, "USD")], "$5"),
}


@pytest.mark.parametrize("name", list(CONTROLS))
def test_redteam2_controls_earn_the_top_reward(name):
    problem, steps, answer = CONTROLS[name]
    for r in _rewards(problem, steps, answer):
        assert r.reward == 1.0, (name, r.reason)


def test_step_fraction_gives_a_right_answer_one_or_the_floor():
    """docs/quantity.md ("Rewards"): with taint and rule 6, step_fraction is 1.0 or 0.3 for a right answer; a
    rejected step off the path (an ungrounded literal, or unused) still earns 0.3 + 0.7 * 2/3 today."""
    for extra in (step("s0", "g1 * 9", 144), step("s0", "g1 + g2", 19)):
        r = _rewards(EGGS, [extra] + EGGS_GOLD, "18")[1]
        assert r.answer_correct and r.reward in (pytest.approx(0.3), 1.0), (extra, r.reward)
