"""Knights & Knaves: generated puzzles have one solution and premises that say what the text says;
public records map through `statements`; same seed, same bytes."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from prosfi.cli import main
from prosfi.data import kk
from prosfi.data.problem import config_tag, read_problems
from prosfi.logic import And, Iff, Implies, Not, Or, Pred, parse

FIXTURES = Path(__file__).parent / "fixtures"


# ---------------------------------------------------------------- independent checkers
def evaluate(f, world: dict[str, bool]) -> bool:
    """Truth of a ground formula (parsed from the premise text) in a world atom -> bool."""
    if isinstance(f, Pred):
        return world[f"{f.name} {' '.join(a.name for a in f.args)}"]
    if isinstance(f, Not):
        return not evaluate(f.body, world)
    a, b = evaluate(f.left, world), evaluate(f.right, world)
    return {And: a and b, Or: a or b, Implies: (not a) or b, Iff: a == b}[type(f)]


def models(problem) -> list[dict[str, bool]]:
    formulas = [parse(p.formal) for p in problem.premises]
    out = []
    for values in itertools.product((True, False), repeat=len(problem.atoms)):
        world = dict(zip(problem.atoms, values))
        if all(evaluate(f, world) for f in formulas):
            out.append(world)
    return out


_ATOM = re.compile(r"^(\w+) is (not )?a (knight|knave)$")


def english_claim(text: str):
    """Parse a rendered claim ("A and B", "if A then B", "A if and only if B", "it is not the case
    that A", brackets for nesting) into a function world(name -> knight?) -> bool."""
    text = text.strip()
    if text.startswith("(") and _closing(text, 0) == len(text) - 1:
        return english_claim(text[1:-1])
    parts = _split_top(text, " if and only if ")
    if len(parts) == 2:
        a, b = map(english_claim, parts)
        return lambda w: a(w) == b(w)
    if text.startswith("if "):
        cond, then = _split_top(text[3:], " then ")
        a, b = english_claim(cond), english_claim(then)
        return lambda w: (not a(w)) or b(w)
    for word, fn in ((" or ", any), (" and ", all)):
        parts = _split_top(text, word)
        if len(parts) > 1:
            subs = [english_claim(p) for p in parts]
            return lambda w, subs=subs, fn=fn: fn(s(w) for s in subs)
    if text.startswith("it is not the case that "):
        inner = english_claim(text[len("it is not the case that "):])
        return lambda w: not inner(w)
    m = _ATOM.match(text)
    assert m, f"cannot read claim {text!r}"
    name, negated, role = m.group(1), bool(m.group(2)), m.group(3)
    return lambda w: (w[name] == (role == "knight")) != negated


def _closing(text: str, i: int) -> int:
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j
    raise AssertionError(f"unbalanced {text!r}")


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts


def speaker_and_claim(sentence: str, names: list[str]) -> tuple[str, str]:
    quoted = re.search(r'"(.*?)[.,]?"', sentence)
    if quoted:
        content = quoted.group(1)
        outside = sentence.replace(quoted.group(0), "")
    else:
        m = re.match(r"^(\w+) \w+(?: \w+)? that (.*)\.$", sentence)
        assert m, f"cannot find the claim in {sentence!r}"
        content, outside = m.group(2), m.group(1)
    speakers = [n for n in names if re.search(rf"\b{n}\b", outside)]
    assert len(speakers) == 1, (sentence, speakers)
    return speakers[0], content


# ---------------------------------------------------------------- generated puzzles
@pytest.mark.parametrize("people,depth,width", [(2, 2, 2), (3, 2, 2), (4, 3, 3), (5, 2, 3), (6, 2, 2),
                                                (7, 3, 2), (8, 2, 2)])
def test_generated_puzzles_have_one_solution_and_faithful_premises(people, depth, width):
    problems = kk.generate(kk.KKConfig(people=people, depth=depth, width=width), count=4, seed=people)
    tag = config_tag(kk.KKConfig(people=people, depth=depth, width=width), "people")  # '' at depth 2, width 2
    assert [p.id for p in problems] == [f"kk-{people}{tag}-s{people}-{i:04d}" for i in range(4)]
    for p in problems:
        p.validate()
        names = p.extra["names"]
        assert len(set(names)) == people and p.atoms == [f"Knight {n.lower()}" for n in names]
        # exactly one model of the formal premises, and it is the gold assignment
        assert models(p) == [p.assignment]
        # each premise is `Knight speaker ↔ claim`, and the English claim means the same
        for prem in p.premises:
            assert prem.text in p.context
            speaker, content = speaker_and_claim(prem.text, names)
            f = parse(prem.formal)
            assert isinstance(f, Iff) and f.left == parse(f"Knight {speaker.lower()}")
            claim = english_claim(content)
            for values in itertools.product((True, False), repeat=people):
                by_name = dict(zip(names, values))
                world = {f"Knight {n.lower()}": v for n, v in by_name.items()}
                assert claim(by_name) == evaluate(f.right, world), (prem.text, prem.formal, by_name)


def test_puzzles_are_distinct_and_seed_controls_them():
    a = kk.generate(kk.KKConfig(people=3), count=20, seed=1)
    b = kk.generate(kk.KKConfig(people=3), count=20, seed=2)
    assert len({p.extra["statements"] for p in a}) == 20
    assert [p.to_dict() for p in a] != [p.to_dict() for p in b]


def test_config_rejects_out_of_range_people():
    with pytest.raises(ValueError, match="people"):
        kk.KKConfig(people=9)


def test_same_seed_same_bytes_through_the_cli(tmp_path):
    outs = []
    for name in ("a.jsonl", "b.jsonl"):
        path = tmp_path / name
        assert main(["data", "kk", "--people", "5", "--count", "6", "--seed", "11", "-o", str(path)]) == 0
        outs.append(path.read_bytes())
    assert outs[0] == outs[1] and len(outs[0].splitlines()) == 6
    path = tmp_path / "c.jsonl"
    main(["data", "kk", "--people", "5", "--count", "6", "--seed", "12", "-o", str(path)])
    assert path.read_bytes() != outs[0]


# ---------------------------------------------------------------- public records
def _records():
    return [json.loads(line) for line in (FIXTURES / "kk_records.jsonl").read_text().splitlines()]


def test_hub_records_map_through_statements():
    recs = _records()
    p = kk.problem_from_kk_record(recs[0])
    assert p.id == kk.hub_record_id(recs[0]) and p.id.startswith("kkhub-2-") and len(p.id) == len("kkhub-2-") + 10
    assert p.premise_map == {"h1": "Knight zoey ↔ ¬ Knight oliver",
                             "h2": "Knight oliver ↔ (Knight oliver ↔ ¬ Knight zoey)"}
    assert p.atoms == ["Knight zoey", "Knight oliver"]
    assert p.assignment == {"Knight zoey": False, "Knight oliver": True}
    assert p.premises[0].text == 'Zoey remarked, "Oliver is not a knight".'
    assert p.context == recs[0]["quiz"]
    p.validate()

    q = kk.problem_from_kk_record(recs[1])
    assert q.id.startswith("kkhub-3-") and q.id != p.id
    assert models(q) == [q.assignment] == [{"Knight mia": False, "Knight ethan": True, "Knight lily": True}]
    assert q.premise_map["h1"] == "Knight mia ↔ (¬ Knight ethan ∧ Knight lily)"
    assert q.premise_map["h2"] == "Knight ethan ↔ (Knight mia → ¬ Knight lily)"
    assert q.premise_map["h3"] == "Knight lily ↔ ¬ ¬ Knight ethan"
    assert [x.text for x in q.premises] == ['Mia said, "Ethan is a knave and Lily is a knight."',
                                            "Ethan told you that if Mia is a knight then Lily is a knave.",
                                            '"Ethan is not a knave," Lily claimed.']


def test_statements_are_read_as_literals_never_evaluated():
    rec = dict(_records()[0], statements="__import__('os').system('echo hacked')")
    with pytest.raises(ValueError, match="statements"):
        kk.problem_from_kk_record(rec)
    rec = dict(_records()[0], statements="(('telling-truth', 5), ('lying', 0))")
    with pytest.raises(ValueError, match="out of range"):
        kk.problem_from_kk_record(rec)


def test_hub_record_with_a_wrong_solution_is_refused():
    rec = dict(_records()[0], solution=[True, True])
    with pytest.raises(ValueError, match="solution"):
        kk.problem_from_kk_record(rec)


def test_cli_reads_a_local_copy_of_hub_records(tmp_path):
    out = tmp_path / "kk.jsonl"
    assert main(["data", "kk", "--file", str(FIXTURES / "kk_records.jsonl"), "-o", str(out)]) == 0
    problems = list(read_problems(out, validate=True))
    assert [p.id for p in problems] == [kk.hub_record_id(r) for r in _records()]


def test_generators_do_not_depend_on_hash_order(tmp_path):
    """Same seed, same bytes across interpreter runs with different string-hash seeds."""
    import os
    import subprocess
    import sys

    outs = []
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        k, f = tmp_path / f"k{hash_seed}.jsonl", tmp_path / f"f{hash_seed}.jsonl"
        code = ("from prosfi.cli import main; "
                f"main(['data', 'kk', '--people', '6', '--count', '5', '--seed', '3', '-o', {str(k)!r}]); "
                f"main(['data', 'fol', '--difficulty', 'hard', '--count', '6', '--seed', '3', '--no-verify', "
                f"'-o', {str(f)!r}])")
        subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
        outs.append((k.read_bytes(), f.read_bytes()))
    assert outs[0] == outs[1]


def test_a_hub_record_has_one_id_on_every_path(tmp_path):
    """`prosfi data kk --file` and `--data kkhub:FILE` read the same record as the same problem (its id comes from
    what it says, not from where it sits), and a record moved in the file keeps its id."""
    from prosfi.eval.sources import load_source

    records = _records()
    out = tmp_path / "kk.jsonl"
    assert main(["data", "kk", "--file", str(FIXTURES / "kk_records.jsonl"), "-o", str(out)]) == 0
    written = [p.id for p in read_problems(out, validate=True)]
    spec = [p.id for p in load_source(f"kkhub:{FIXTURES / 'kk_records.jsonl'}").problems]
    assert sorted(written) == sorted(spec) and len(set(written)) == len(records)
    assert [kk.problem_from_kk_record(r).id for r in reversed(records)] == list(reversed(written))
