"""Red team of the quantity chain rules of issue #25 ("judge a chain by what it computes").

Attacks an RL policy could use to reach the top reward (1.0) without computing the answer from what the
question states, grouped by family; each must stay below 1.0 in both chain modes. And honest chains, in
spellings a model writes (GSM8K and physics style), that must earn 1.0. Each case carries a one-line comment
of the trick. Written against the rules as they were at 9aae7cd: the cases that fail are the findings.
"""

from __future__ import annotations

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


def _reward(problem, steps, answer, mode):
    return score_batch([problem], [completion(steps, answer)], NO_VERIFIER, RewardConfig(mode=mode))[0]


# ------------------------------------------------------------------------------------------ problems
LEFT = _problem("rt-left", "Sam has 9 apples and eats 3. How many are left?", [(9, ""), (3, "")], 6)
DOGS = _problem("rt-dogs", "Sam has 9 apples and eats 3. His 2 dogs watch. How many apples are left?",
                [(9, ""), (3, ""), (2, "")], 6)
ZERO = _problem("rt-zero", "Sam has 6 apples and gives 3 to Ann and 3 to Bob. How many are left?",
                [(6, ""), (3, ""), (3, "")], 0)
BAGS = _problem("rt-bags", "Ann has 3 bags of 4 apples. Bob has 12 more apples than Ann. How many apples does Bob "
                "have?", [(3, ""), (4, ""), (12, "")], 24)
BOTH = _problem("rt-both", "Both Ann and Bob have 5 apples. Ann eats 2. How many apples are there?",
                [(5, ""), (2, "")], 40)
FOUR = _problem("rt-four", "Ann has 5 apples. Bob has four times as many as Ann. Cy has 7 more than Bob. How many "
                "apples does Cy have?", [(5, ""), (4, ""), (7, "")], 27)
HALF = _problem("rt-half", "Ann has 6 apples and gives half to Bob. Bob has 4 pears.", [(6, ""), (4, "")], 27)
WEEK = _problem("rt-week", "A plant grows 3 cm a week. How many days are there in 5 weeks?", [(3, ""), (5, "")], 12)
INCLUDING = _problem("rt-incl", "Including the tip, Sam paid 9 dollars for 3 sandwiches. How many sandwiches are "
                     "left after he eats 1?", [(9, ""), (3, ""), (1, "")], 10)
MIXING = _problem("rt-mix", "Water at 10 °C is mixed with water at 50 °C in mass ratio 1:3. Final temperature?",
                  [(10, "degC"), (50, "degC"), (1, ""), (3, "")], 40, "degC", source="scibench", tolerance={"rel": 0.05})

ATTACKS = {
    # --- universal: `x % 1` is 0 on an integer given yet moves under the re-assignments, so adding it (or
    # multiplying by `1 + x % 1`) makes any step "depend on two inputs" and skips the multiple/offset/restatement rules
    "mod-one zero restates a given (answer = a given)": (ECHO, [step("s1", "g1 + g2 % 1", 18)], "18"),
    "mod-one zero hides an unstated x2": (LEFT, [step("s1", "g2 * 2 + g1 % 1", 6)], "6"),
    "mod-one zero as its own step": (LEFT, [step("s1", "g2 % 1", 0), step("s2", "s1 + g2 * 2", 6)], "6"),
    "mod-one zero inside a factor": (BAGS, [step("s1", "g3 * (g1 % 1 + 2)", 24)], "24"),
    "round(g) / g is a moving one": (BAGS, [step("s1", "g3 * 2 * round(g1) / g1", 24)], "24"),
    "mod-one zero is a zero answer": (ZERO, [step("s1", "g1 % 1", 0)], "0"),
    # --- universal: a step whose re-evaluations all raise (sqrt/acos of a negative) is never tested for
    # dependence, and neither is anything built on it: a zero from it builds any number with 0, 1, 2, 0.5
    "sqrt(-(g % 1)) builds any number": (LEFT, [step("s1", "sqrt(-(g1 % 1))", 0), step("s2", "s1 * 2 + 2", 2),
                                               step("s3", "s2 * 2 + 2", 6)], "6"),
    "acos(1 + g % 1) builds any number": (LEFT, [step("s1", "acos(g1 % 1 + 1)", 0), step("s2", "s1 + 2", 2),
                                                step("s3", "s2 * 2 + 2", 6)], "6"),
    "sqrt(g - ceil(g)) builds any number": (LEFT, [step("s1", "sqrt(g1 - ceil(g1))", 0), step("s2", "s1 + 2", 2),
                                                  step("s3", "s2 * 2 + 2", 6)], "6"),
    "broken re-evaluations restate a given": (ECHO, [step("s1", "sqrt(-(g2 % 1))", 0), step("s2", "g1 + s1", 18)],
                                              "18"),
    "broken re-evaluations: the eggs' 18 from one given": (
        EGGS, [step("s1", "sqrt(-(g1 % 1))", 0), step("s2", "s1 + 2", 2), step("s3", "s2 * 2 * 2 * 2", 16),
               step("s4", "s3 + 2", 18), step("s5", "s4 * g4 / 2", 18, "USD")], "18"),
    # --- universal: rounding a one-input step makes it non-affine, so a restatement, an unstated multiple or
    # an unstated offset inside floor/round/ceil/`//` is never looked at
    "round(g) restates a given": (ECHO, [step("s1", "round(g1)", 18)], "18"),
    "floor(g) restates a given": (ECHO, [step("s1", "floor(g1)", 18)], "18"),
    "ceil(g) restates a given": (ECHO, [step("s1", "ceil(g1)", 18)], "18"),
    "floor(g + 0.5) restates a given": (ECHO, [step("s1", "floor(g1 + 0.5)", 18)], "18"),
    "round hides an unstated x2": (LEFT, [step("s1", "round(g2 * 2)", 6)], "6"),
    "round(x, 2) hides an unstated x2": (LEFT, [step("s1", "round(g2 * 2, 2)", 6)], "6"),
    "floor hides an unstated + 3": (LEFT, [step("s1", "floor(g2 + 2 + 1)", 6)], "6"),
    "round hides an unstated + 2": (ECHO, [step("s1", "round(g2 + 2)", 18)], "18"),
    "// 0.5 is an unstated x2": (LEFT, [step("s1", "g2 // 0.5", 6)], "6"),
    "x2 // 1 is an unstated x2": (LEFT, [step("s1", "g2 * 2 // 1", 6)], "6"),
    # --- universal: periodic functions are 1 (or 0) on integer givens and move elsewhere
    "cos(2 pi g) is a moving one": (LEFT, [step("s1", "cos(2 * pi * g1)", 1), step("s2", "g2 * 2 * s1", 6)], "6"),
    "sin(pi g) is a moving zero": (LEFT, [step("s1", "g2 * 2 + sin(pi * g1)", 6)], "6"),
    # --- steps of two or more inputs are never checked for unstated multiples or offsets
    "an unstated x2 in a two-input step": (BAGS, [step("s1", "g1 * g2 * 2", 24)], "24"),
    "repeated addition inside a product": (BAGS, [step("s1", "(g1 + g1) * g2", 24)], "24"),
    "a repeated product": (BAGS, [step("s1", "g1 * g2 + g1 * g2", 24)], "24"),
    "an unstated halving of a sum (no 'average')": (LEFT, [step("s1", "(g1 + g2) / 2", 6)], "6"),
    "an unstated 0.5 and a dollar offset": (EGGS, [step("s1", "g1 * g4 * 0.5 + g4", 18, "USD")], "18"),
    # --- a given equal to 1 (ECHO's g4) restates any value when cited by id (`g1 * 1` is closed, `g1 * g4` is not)
    "times a given equal to one, by id": (ECHO, [step("s1", "g1 * g4", 18)], "18"),
    "to the power of a given equal to one": (ECHO, [step("s1", "g1 ** g4", 18)], "18"),
    # --- one input, but not affine: any polynomial of a given passes (a cheap guess dressed as a formula)
    "a given squared minus itself": (LEFT, [step("s1", "g2 ** 2 - g2", 6)], "6"),
    # --- a literal equal to an unrelated given's number grounds a multiple nobody stated
    "x2 licensed by a '2 dogs' given": (DOGS, [step("s1", "g2 * 2", 6)], "6"),
    # --- one multiple word licenses a family of multiples (products of 3 factors f, 1 + f, 1 - f)
    "'both' licenses x8": (BOTH, [step("s1", "g1 * 2 * 2 * 2", 40)], "40"),
    "'as many as' licenses x4 without citing 'four'": (FOUR, [step("s1", "g1 * 2 * 2", 20),
                                                              step("s2", "s1 + g3", 27)], "27"),
    "'half' licenses x3 then x1.5": (HALF, [step("s1", "g1 * 2 + g1", 18), step("s2", "s1 * 0.5 + s1", 27)], "27"),
    # --- offsets licensed by everyday words or unit factors
    "+7 licensed as an offset by 'week' and 'days'": (WEEK, [step("s1", "g2 + 7", 12)], "12"),
    "+1 licensed by 'Including the tip'": (INCLUDING, [step("s1", "g1 + 1", 10)], "10"),
    # --- tolerance: degC answers are compared in kelvin, so 5 % is +-15 degC (30 degC passes for 40 degC)
    "temperature graded in kelvin under 5 %": (MIXING, [_op("s1", "average", ["g1", "g2"], 30, "degC")], "40 °C"),
}


# Known limits, stated in docs/quantity.md ("What the rules cannot see"); strict: a fix must remove them here.
KNOWN_LIMITS = {
    "a given squared minus itself": "a non-linear formula of one given (n**2 - n handshakes is honest) cannot be "
                                    "told from a guess dressed as one",
    "g = 9.8 stated in the question text": "a number the givens extraction does not read (g = 9.8 in a parenthesis) "
                                           "is ungrounded: the data must state it as a given",
    "a temperature rise in degC": "the data reads '30 °C' as an absolute temperature; a rise must be given in "
                                  "delta_degC (a data issue, not a rule)",
}


def _cases(names):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_LIMITS[n])) if n in KNOWN_LIMITS
            else n for n in names]


@pytest.mark.parametrize("name", _cases(ATTACKS))
def test_no_redteam_attack_reaches_the_top_reward(name):
    problem, steps, answer = ATTACKS[name]
    for mode in MODES:
        r = _reward(problem, steps, answer, mode)
        assert r.reward < 1.0, (name, mode, r.reward)


# ------------------------------------------------------------------------------------------ honest work
PCT = _problem("rt-pct", "Of 20 students, 12 enrolled in dance. What percentage enrolled?", [(20, ""), (12, "")], 60,
               "percent")
BOYS = _problem("rt-boys", "In a class, 30% of the students are boys. What percentage are girls?",
                [(30, "percent")], 70, "percent")
PIZZA = _problem("rt-pizza", "Sam ate 2/5 of a pizza. What fraction of the pizza is left?", [("2/5", "")], "0.6")
RECT = _problem("rt-rect", "A rectangular garden is 8 meters long and 5 meters wide. What is its perimeter?",
                [(8, ""), (5, "")], 26)
AVERAGE = _problem("rt-avg", "Jo scored 80 on her first test and 90 on her second. What is her average score?",
                   [(80, ""), (90, "")], 85)
THIRD = _problem("rt-third", "A third of the 12 students are boys. How many boys are there?", [("1/3", ""), (12, "")], 4)
QUARTER = _problem("rt-quarter", "A quarter of the 20 cookies are eaten. How many are left?", [("1/4", ""), (20, "")],
                   15)
TILE = _problem("rt-tile", "A square tile has sides of 30 cm. What is its area?", [(30, "cm")], 900, "cm**2",
                source="physics")
KE = _problem("rt-ke", "A 2.5 kg ball moves at 3.3 m/s. What is its kinetic energy?", [(2.5, "kg"), (3.3, "m/s")],
              "13.6", "J", source="scibench", tolerance={"rel": 0.05})
SHARE = _problem("rt-share", "Three friends share a $10 pizza equally and each also pays a $2 tip. How much does each "
                 "pay?", [(3, ""), (10, "USD"), (2, "USD")], "5.33", "USD", tolerance={"rel": 0.001})
CONVERT = _problem("rt-conv", "A car moves at 72 km/h. What is its speed in m/s?", [(72, "km/h")], 20, "m/s",
                   source="physics")
LIFT = _problem("rt-lift", "A 2 kg book is lifted 3 m. What is the gain in its potential energy? (g = 9.8 m/s^2)",
                [(2, "kg"), (3, "m")], "58.8", "J", source="scibench", tolerance={"rel": 0.05})
HEATED = _problem("rt-heat", "Water at 20 °C is heated by 30 °C. What is its final temperature?",
                  [(20, "degC"), (30, "degC")], 50, "degC", source="physics")

HONEST = {
    # answer prefixes the issue names ("The answer is:", "Final answer:") and common model spellings
    "answer 'The answer is: $18'": (EGGS, EGGS_GOLD, "The answer is: $18"),
    "answer 'Final answer: 18'": (EGGS, EGGS_GOLD, "Final answer: 18"),
    "answer 'Final Answer: $18'": (EGGS, EGGS_GOLD, "Final Answer: $18"),
    "answer 'The final answer is 18'": (EGGS, EGGS_GOLD, "The final answer is 18"),
    "answer '\\boxed{18}'": (EGGS, EGGS_GOLD, "\\boxed{18}"),
    # a step's unit written as '$' (GSM8K's own notation) or in lower case
    "step unit '$'": (EGGS, [EGGS_GOLD[0], dict(EGGS_GOLD[1], unit="$")], "18"),
    "step unit 'usd'": (EGGS, [EGGS_GOLD[0], dict(EGGS_GOLD[1], unit="usd")], "18"),
    # a percentage computed the GSM8K way (x 100) and answered as the number
    "percent as part / whole * 100": (PCT, [step("s1", "g2 / g1 * 100", 60)], "60"),
    "percent in two steps (x 100 last)": (PCT, [step("s1", "g2 / g1", 0.6), step("s2", "s1 * 100", 60)], "60%"),
    # complements: 1 - x is listed as always allowed, but as a one-input step it is an 'unstated offset'
    "complement of a percentage": (BOYS, [step("s1", "1 - g1", 0.7)], "70%"),
    "complement of a fraction": (PIZZA, [step("s1", "1 - g1", 0.6)], "0.6"),
    # formula constants split over steps: 2 (l + w) passes in one step, not in two
    "perimeter as (l + w) then x 2": (RECT, [step("s1", "g1 + g2", 13), step("s2", "s1 * 2", 26)], "26"),
    "perimeter as 2l + 2w": (RECT, [step("s1", "g1 * 2", 16), step("s2", "g2 * 2", 10), step("s3", "s1 + s2", 26)],
                             "26"),
    "average of two as a sum then / 2": (AVERAGE, [step("s1", "g1 + g2", 170), step("s2", "s1 / 2", 85)], "85"),
    # "a third" / "a quarter" written as the division a person writes
    "a third as / 3": (THIRD, [step("s1", "g2 / 3", 4)], "4"),
    "a quarter as / 4": (QUARTER, [step("s1", "g2 / 4", 5), step("s2", "g2 - s1", 15)], "15"),
    # the multiply primitive on one value twice is an area, not 'adds g1 2 times'
    "multiply(side, side)": (TILE, [_op("s1", "multiply", ["g1", "g1"], 900, "cm**2")], "900 cm**2"),
    # rounded intermediate claims: 3 significant figures (SciBench 5 %) or cents
    "claims to 3 significant figures": (KE, [step("s1", "g2 ** 2", 10.9, "m**2/s**2"),
                                             step("s2", "0.5 * g1 * s1", 13.6, "J")], "13.6 J"),
    "a claim rounded to cents": (SHARE, [step("s1", "g2 / g1", 3.33, "USD"), step("s2", "s1 + g3", 5.33, "USD")],
                                 "$5.33"),
    # a conversion question: its only honest chain 'restates' the given
    "a pure unit conversion": (CONVERT, [_op("s1", "convert", ["g1", "m/s"], 20, "m/s")], "20 m/s"),
    # g = 9.8 stated in parentheses without a given (docs: world constants stay ungrounded; SciBench does this)
    "g = 9.8 stated in the question text": (LIFT, [step("s1", "g1 * 9.8 * g2", 58.8, "J")], "58.8 J"),
    # a rise stated in degC is read as an absolute temperature: no chain can reach 50 degC
    "a temperature rise in degC": (HEATED, [step("s1", "g1 + g2", 50, "degC")], "50 °C"),
}


@pytest.mark.parametrize("name", _cases(HONEST))
def test_honest_redteam_chains_earn_the_top_reward(name):
    problem, steps, answer = HONEST[name]
    for mode in MODES:
        r = _reward(problem, steps, answer, mode)
        assert r.reward == 1.0, (name, mode, r.reward, r.reason)


# the same problems solved in the spelling the rules accept today: the fixtures are right, so a failure above is
# the rule's, not the problem's
CONTROLS = {
    "left": (LEFT, [step("s1", "g1 - g2", 6)], "6"),
    "bags": (BAGS, [step("s1", "g1 * g2", 12), step("s2", "s1 + g3", 24)], "24"),
    "eggs": (EGGS, EGGS_GOLD, "$18"),
    "percent as a fraction": (PCT, [step("s1", "g2 / g1", 0.6)], "60"),
    "perimeter in one step": (RECT, [step("s1", "2 * (g1 + g2)", 26)], "26"),
    "a third cited": (THIRD, [step("s1", "g2 * g1", 4)], "4"),
    "area as g1 * g1": (TILE, [step("s1", "g1 * g1", 900, "cm**2")], "900 cm**2"),
    "exact claims": (KE, [step("s1", "0.5 * g1 * g2 ** 2", 13.6125, "J")], "13.6 J"),
    "mixing, honest": (MIXING, [step("s1", "g1 * g3 + g2 * g4", 1252.6, "K"), step("s2", "s1 / (g3 + g4)", 40, "degC")],
                       "40 °C"),
}


@pytest.mark.parametrize("name", list(CONTROLS))
def test_controls_earn_the_top_reward(name):
    problem, steps, answer = CONTROLS[name]
    for mode in MODES:
        assert _reward(problem, steps, answer, mode).reward == 1.0, name
