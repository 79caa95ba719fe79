"""World facts and conventions licensed by a pair of the question's words (issue #25's "a documented table of
which words license which factor"; `prosfi.quant.licensed.CONSTANT_CONTEXT`): 5280 with "mile" and "feet", 30 with
"June" and "day", 4 with "month" and "week" (GSM8K's convention), legs of an animal with its name and "legs". Each
honest use earns the top reward; the same number without its pair, built from constants alone, detoured back to a
given or used twice stays below it; the gold builder cites the fact where the solution's line names it, not a given
that counts something else."""

from __future__ import annotations

import json

import pytest
from quant_chain_support import completion, step

from prosfi.data.gsm8k import load_gsm8k
from prosfi.data.problem import Problem
from prosfi.quant import extract_givens
from prosfi.quant.licensed import allowed_constant, is_licensed_multiple
from prosfi.rewards.config import RewardConfig
from prosfi.rewards.score import score_batch

NO_VERIFIER = object()  # quantity chains are checked in-process


def _problem(question, givens, answer):
    return Problem.from_dict({
        "id": "fact", "kind": "quantity", "source": "gsm8k", "question": question,
        "givens": [{"id": f"g{i + 1}", "value": str(v), "unit": "", "text": t} for i, (v, t) in enumerate(givens)],
        "target": {"name": "answer", "unit": ""}, "answer": {"value": str(answer), "unit": ""}})


def _reward(problem, steps, answer):
    return [score_batch([problem], [completion(steps, answer)], NO_VERIFIER, RewardConfig(mode=m))[0].reward
            for m in ("prosfi", "step_fraction")]


# (question naming the pair, the same question without one of its words, givens, expr over g1, answer)
FACTS = {
    "feet per yard": ("A rope is 4 yards long. How many feet long is it?",
                      "A rope is 4 yards long. How many metres long is it?", [(4, "4 yards")], "g1 * 3", 12),
    "days per week, 'every morning'": ("Claire eats 3 eggs every morning. How many eggs does she eat in a week?",
                                       "Claire eats 3 eggs in the morning. How many eggs does she eat in a week?",
                                       [(3, "3")], "g1 * 7", 21),
    "wheels of a tricycle": ("4 kids ride tricycles to school. How many wheels are there?",
                             "4 kids ride tricycles to school. How many bells are there?", [(4, "4")], "g1 * 3", 12),
    "feet per mile": ("Steve lives 3 miles away. How many feet is that?",
                      "Steve lives 3 miles away. How many metres is that?", [(3, "3 miles")], "g1 * 5280", 15840),
    "ounces per pound": ("The roast weighs 3 pounds. How many ounces is that?",
                         "The roast weighs 3 pounds. How many grams is that?", [(3, "3 pounds")], "g1 * 16", 48),
    "pounds per ton": ("A truck carries 3 tons of sand. How many pounds of sand is that?",
                       "A truck carries 3 tons of sand. How many kilos of sand is that?", [(3, "3 tons")],
                       "g1 * 2000", 6000),
    "quarts per gallon": ("A jug holds 3 gallons of tea. How many quarts of tea does it hold?",
                          "A jug holds 3 gallons of tea. How many cups of tea does it hold?", [(3, "3 gallons")],
                          "g1 * 4", 12),
    "years per decade": ("Tim collects 30 lemons each year. How many lemons does he get in a decade?",
                         "Tim collects 30 lemons each season. How many lemons does he get in a decade?",
                         [(30, "30")], "g1 * 10", 300),
    "years per century": ("A tree grows 2 rings a year. How many rings in a century?",
                          "A tree grows 2 rings a season. How many rings in a century?", [(2, "2")], "g1 * 100", 200),
    "weeks in a month": ("Miguel uses 60 sheets of paper every week. How many sheets does he use in a month?",
                         "Miguel uses 60 sheets of paper every cycle. How many sheets does he use in a month?",
                         [(60, "60")], "g1 * 4", 240),
    "days in June": ("Jen spends 3 dollars on fish food a day. How much does she spend in June?",
                     "Jen spends 3 dollars on fish food a day. How much does she spend this month?", [(3, "3")],
                     "g1 * 30", 90),
    "days in May": ("Jen spends 3 dollars on fish food a day. How much does she spend in the month of May?",
                    "Jen spends 3 dollars on fish food a day. You may guess how much she spends this month.",
                    [(3, "3")], "g1 * 31", 93),
    "days in February": ("A shop sells 5 cakes a day. How many cakes does it sell in February?",
                         "A shop sells 5 cakes a day. How many cakes does it sell in a month?", [(5, "5")],
                         "g1 * 28", 140),
    "legs of a dog": ("A pet store has 5 dogs. How many legs do the dogs have?",
                      "A pet store has 5 dogs. How many tails and ears do the dogs have?", [(5, "5")], "g1 * 4", 20),
    "legs of a chicken": ("A farm has 7 chickens. How many legs do they have?",
                          "A farm has 7 chickens. How many wings do they have?", [(7, "7")], "g1 * 2", 14),
    "legs of an insect": ("There are 3 ants on the table. How many legs are there?",
                          "There are 3 ants on the table. How many antennae are there?", [(3, "3")], "g1 * 6", 18),
    "legs of a spider": ("There are 4 spiders in the web. How many legs are there?",
                         "There are 4 spiders in the web. How many eyes are there?", [(4, "4")], "g1 * 8", 32),
}


@pytest.mark.parametrize("name", list(FACTS))
def test_a_fact_whose_pair_the_question_names_earns_the_top_reward_and_without_it_does_not(name):
    named, unnamed, givens, expr, answer = FACTS[name]
    ok = _problem(named, givens, answer)
    assert _reward(ok, [step("s1", expr, answer)], str(answer)) == [1.0, 1.0]
    # the same chain where the question names only one of the pair: the number is invented
    bare = _problem(unnamed, givens, answer)
    assert max(_reward(bare, [step("s1", expr, answer)], str(answer))) < 1.0


MONTH = "Miguel uses 60 sheets of paper every week and 5 pens every day. How many {} does he use in a month?"


@pytest.mark.parametrize("steps,answer", [
    # a fact built from constants alone: 4 weeks of 7 days is 28, cited by nothing
    ([step("s1", "4 * 7", 28), step("s2", "g2 * s1", 140)], 140),
    # detoured back to a given: x 4 then / 4
    ([step("s1", "g1 * 4", 240), step("s2", "s1 / 4", 60)], 60),
    # the fact used twice (x 16): one pair licenses one 4
    ([step("s1", "g1 * 4", 240), step("s2", "s1 * 4", 960)], 960),
    ([step("s1", "g1 * 4 * 4", 960)], 960),
    # the fact added as an offset, not a factor
    ([step("s1", "g1 + 4", 64)], 64),
    # a constant: the given cancelled, then scaled by the fact
    ([step("s1", "g1 - g1 + 4", 4)], 4),
])
def test_a_licensed_fact_cannot_launder_a_number(steps, answer):
    p = _problem(MONTH.format("sheets"), [(60, "60"), (5, "5")], answer)
    assert max(_reward(p, steps, str(answer))) < 1.0


def test_the_pairs_are_whole_words_and_month_names_are_names():
    # "may" the verb, "May I" at a sentence's start, "march" the verb are no months
    assert allowed_constant(31, "Jen eats in May, 3 times a day.")
    assert not allowed_constant(31, "You may eat 3 times a day.")
    assert not allowed_constant(31, "Jen asks: May I eat 3 times a day?")
    assert not allowed_constant(31, "May I eat 3 times a day?")
    assert not allowed_constant(31, "The band will march 3 hours a day.")
    # one named month licenses its own number only
    assert allowed_constant(30, "He hikes every day in June.") and not allowed_constant(31, "He hikes every day in June.")
    # coins are not licensed: a coin's chain computes a plain number where GSM8K's answer is in cents or dollars
    assert not allowed_constant(25, "He has 3 quarters and 2 dimes. How many cents?")
    # a two-legged animal's 2 is always a literal, but a multiple only with "legs"
    assert is_licensed_multiple(2, "7 chickens, how many legs") and not is_licensed_multiple(2, "7 chickens, eggs")
    # whole words: "legend", "dogma", "mileage", "tonight" name nothing
    assert not allowed_constant(4, "The legend of the dogma.")
    assert not allowed_constant(5280, "The mileage on 3 feet.") and not allowed_constant(2000, "tonight, 3 pounds")
    # "every morning" is each day; a morning is not a day ("in the morning" with "hours" licenses no 24)
    assert allowed_constant(24, "He works 3 hours every morning.")
    assert not allowed_constant(24, "In the morning he worked 3 hours.")
    # a unit symbol counts after a number, never at the question's start: "In" names no inches
    assert not allowed_constant(12, "In the park he walks 3 feet.") and allowed_constant(12, "3 in is a quarter foot")


def test_an_article_before_a_number_word_leaves_the_number_a_given():
    # "a four-week month" states the 4 (the article was read as part of the number and the 4 dropped)
    got = [(g.value, g.text) for g in extract_givens("In a four-week month, a one-pound steak and a two and a half "
                                                     "hour trip, a hundred and five, a third.")]
    assert got == [("4", "four-week"), ("1", "one-pound"), ("2.5", "a two and a half hour"),
                   ("105", "a hundred and five"), ("1/3", "a third")]


def test_the_gold_trace_cites_the_fact_its_line_names_not_a_given_of_the_same_number(tmp_path):
    rec = {"question": "A pet store currently has 5 dogs, 2 cats, and 10 birds. How many legs in total do the pets in "
                       "the store have?",
           "answer": "The dogs have 5 dogs * 4 legs/dog = <<5*4=20>>20 legs.\nThe cats have 2 cats * 4 legs/cat = "
                     "<<2*4=8>>8 legs.\nThe birds have 10 birds * 2 legs/bird = <<10*2=20>>20 legs.\nThe pets have "
                     "20 legs + 8 legs + 20 legs = <<20+8+20=48>>48 legs.\n#### 48"}
    path = tmp_path / "legs.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    (p,) = load_gsm8k(path)
    # "2 legs/bird" is the fact, not the "2 cats" (the builder cited g2 for it before it read the line's noun)
    assert [s["expr"] for s in p.extra["gold_steps"]] == ["g1 * 4", "g2 * 4", "g3 * 2", "s3 + s2 + s1"]
    # a given that counts what the line names stays cited: "a month with four weeks ... 4 weeks/month"
    rec = {"question": "Britany spends 282 minutes a week on TikTok. How much time does she spend in a month with "
                       "four weeks?",
           "answer": "282 minutes/week * 4 weeks/month = <<282*4=1128>>1128 minutes/month\n#### 1128"}
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    (p,) = load_gsm8k(path)
    assert [s["expr"] for s in p.extra["gold_steps"]] == ["g1 * g2"]


@pytest.mark.xfail(strict=True, reason="a licensed fact scales any value of a problem that names its pair: whether it "
                                       "is applied to what it describes cannot be seen (docs/quantity.md, 'What the "
                                       "rules cannot see')")
def test_a_fact_applied_to_the_wrong_quantity_stays_below_the_top_reward():
    # 4 legs licensed by "dogs" and "legs", applied to the cats and the birds: (2 + 10) * 4 is the gold 48 by chance
    # (the honest chain is 5 * 4 + 2 * 4 + 10 * 2); on GSM8K's test split such one-step coincidences of one or two
    # givens with a fact reach 1.0 on 5 more records than with unit factors alone
    p = _problem("A pet store has 5 dogs, 2 cats, and 10 birds. How many legs do the pets have?",
                 [(5, "5"), (2, "2"), (10, "10")], 48)
    assert max(_reward(p, [step("s1", "(g2 + g3) * 4", 48)], "48")) < 1.0
