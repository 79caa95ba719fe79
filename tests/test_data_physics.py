"""The physics generator: seeded and deterministic, chain length by difficulty, unit conversions on the way,
and every gold chain earns the top reward (checked against an independent Pint computation too)."""

from __future__ import annotations

import json

import pint
import pytest

from prosfi.cli import main
from prosfi.data.physics import DIFFICULTY_STEPS, generate
from prosfi.data.quant_gold import gold_completion


def _verifier():
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.verifier import Verifier

    return Verifier(VerifierConfig(workers=0))


def test_same_seed_same_problems_other_seed_other_values():
    a = [p.to_dict() for p in generate("medium", 6, seed=3)]
    assert a == [p.to_dict() for p in generate("medium", 6, seed=3)]
    assert a != [p.to_dict() for p in generate("medium", 6, seed=4)]
    assert [p["id"] for p in a] == [f"physics-medium-s3-{i:04d}" for i in range(6)]


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_chain_length_follows_difficulty_and_problems_validate(difficulty):
    lo, hi = DIFFICULTY_STEPS[difficulty]
    for p in generate(difficulty, 12, seed=0):
        p.validate()
        assert lo <= len(p.extra["gold_steps"]) <= hi
        spans = [p.question[g["start"]:g["end"]] for g in p.givens]
        assert spans == [g["text"] for g in p.givens]


def test_givens_need_unit_conversions():
    units = {g["unit"] for d in ("easy", "medium", "hard") for p in generate(d, 12, 0) for g in p.givens}
    assert {"km/h", "g", "min", "degC", "L", "cm**2", "percent", "h"} <= units
    answers = {p.answer["unit"] for d in ("easy", "medium", "hard") for p in generate(d, 12, 0)}
    assert {"J", "kPa", "kW", "N", "USD"} <= answers


def test_values_agree_with_an_independent_pint_computation():
    ureg = pint.UnitRegistry()
    for p in generate("easy", 6, 0):
        g = {x["id"]: ureg.Quantity(float(x["value"]), x["unit"].replace("percent", "percent")) for x in p.givens}
        topic = p.extra["gold_steps"][0].get("op")
        if topic == "kinetic_energy":
            want = (0.5 * g["g1"] * g["g2"] ** 2).to("J")
        elif topic == "momentum":
            want = (g["g1"] * g["g2"]).to("kg*m/s")
        elif topic == "average_speed":
            want = (g["g1"] / g["g2"]).to("m/s")
        elif topic == "weight":
            want = (g["g1"] * g["g2"]).to("N")
        elif topic == "ideal_gas_pressure":
            t = ureg.Quantity(float(p.givens[1]["value"]), ureg.degC).to("K")
            want = (g["g1"] * ureg.molar_gas_constant * t / g["g3"]).to("kPa")
        else:  # ohm_current then electric_power: P = V^2 / R
            want = (g["g1"] ** 2 / g["g2"]).to("W")
        assert float(p.answer["value"]) == pytest.approx(want.magnitude, rel=1e-6), p.id


def test_every_gold_chain_earns_the_top_reward():
    from prosfi.rewards import score_batch

    problems = [p for d in ("easy", "medium", "hard") for p in generate(d, 16, seed=11)]
    with _verifier() as v:
        results = score_batch(problems, [gold_completion(p) for p in problems], v)
    assert [r.reward for r in results] == [1.0] * len(problems)


def test_cli_and_eval_spec(tmp_path, capsys):
    out = tmp_path / "phys.jsonl"
    assert main(["data", "physics", "--difficulty", "hard", "--count", "5", "--seed", "2", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 5 and all(r["kind"] == "quantity" and r["difficulty"] == "hard" for r in rows)
    assert main(["data", "validate", str(out)]) == 0
    from prosfi.eval.sources import SpecError, load_source

    src = load_source("physics:easy,hard", count=3)
    assert [src.group(p) for p in src.problems] == [("physics", "easy")] * 3 + [("physics", "hard")] * 3
    with pytest.raises(SpecError):
        load_source("physics:extreme")


def test_demo_task_is_one_step_over_a_small_value_table_with_many_distinct_problems():
    problems = generate("demo", 600, seed=0)
    values = {p.answer["value"] for p in problems}
    assert values == {str(2 * m) for m in range(1, 7)}  # 0.5 * m * (2 m/s)^2
    assert len({p.question for p in problems}) > 400
    assert all(p.extra["gold_steps"][0]["op"] == "kinetic_energy" for p in problems)


def test_demo_gold_earns_the_top_reward_and_its_careless_twin_does_not():
    """The CPU demo (recipes/demo/cpu_quant.yaml) needs both: the verified form pays 1.0, the literal-only
    form with the same answer pays less under the process reward and the same under the outcome reward."""
    from prosfi.domains import domain_for
    from prosfi.rewards import RewardConfig, score_batch

    problems = generate("demo", 6, seed=0)
    gold = [gold_completion(p) for p in problems]
    careless = [domain_for(p).sloppy_completion(p) for p in problems]
    with _verifier() as v:
        pro = score_batch(problems + problems, gold + careless, v)
        out = score_batch(problems, careless, v, reward_config=RewardConfig(mode="outcome"))
    assert [r.reward for r in pro[:6]] == [1.0] * 6
    assert all(r.reward < 1.0 and r.answer_correct for r in pro[6:])
    assert [r.reward for r in out] == [1.0] * 6


def test_property_any_seed_any_difficulty_gold_earns_the_top_reward():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from prosfi.rewards import score_batch

    with _verifier() as v:
        @settings(max_examples=25, deadline=None)
        @given(st.sampled_from(["easy", "medium", "hard", "demo"]), st.integers(0, 10**9))
        def check(difficulty, seed):
            problems = generate(difficulty, 4, seed)
            results = score_batch(problems, [gold_completion(p) for p in problems], v)
            assert [r.reward for r in results] == [1.0] * 4, (difficulty, seed)

        check()
