"""ProverQA: the nl2fol -> Lean mapping, the record loader on fixture records, and the offline
generator whose labels the verifier (and Prover9) confirm."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prosfi.cli import main
from prosfi.data import pqa_gen
from prosfi.data.fol import FOLSyntaxError, fol_to_lean
from prosfi.data.labels import verified_labels
from prosfi.data.problem import read_problems
from prosfi.data.proverqa import load_proverqa, problem_from_proverqa_record
from prosfi.logic import And, Const, Exists, Forall, Iff, Implies, Not, Or, Pred, Var, Xor, parse
from prosfi.logic.keywords import RESERVED
from prosfi.verify.config import VerifierConfig
from prosfi.verify.verifier import Verifier

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def z3():
    with Verifier(VerifierConfig(backends=("z3",), workers=1)) as v:
        yield v


@pytest.fixture(scope="module")
def prover9():
    with Verifier(VerifierConfig(backends=("prover9",), workers=1)) as v:
        yield v


# ---------------------------------------------------------------- nl2fol -> Lean
@pytest.mark.parametrize("fol,lean", [
    ("has_experienced_heartbreak(Brecken) ⊕ has_never_experienced_heartbreak(Brecken)",
     "Xor' (has_experienced_heartbreak Brecken) (has_never_experienced_heartbreak Brecken)"),
    ("∀x (kind(x) → nice(x))", "∀ x, kind x → nice x"),
    ("∀x ((loyal(x) ∧ likes(x,Sam)) →happy(x))", "∀ x, (loyal x ∧ likes x Sam) → happy x"),
    ("  likes( Rex ,  Sam )  ", "likes Rex Sam"),
    ("∃x (grumpy(x) ∧ ¬tall(x))", "∃ x, grumpy x ∧ ¬ tall x"),
    ("¬(p(A) ∨ q(A))", "¬ (p A ∨ q A)"),
    ("∀x ∀y (likes(x, y) → knows(y, x))", "∀ x, ∀ y, likes x y → knows y x"),
    ("∀x (p(x)) → q(A)", "(∀ x, p x) → q A"),
    ("p(A) ↔ q(A) ↔ r(A)", "p A ↔ (q A ↔ r A)"),
    ("show(at)", "show_ at_"),
])
def test_fol_maps_to_lean_syntax(fol, lean):
    assert fol_to_lean(fol) == lean
    parse(lean)


@pytest.mark.parametrize("bad", ["p(A", "∀ (p(x))", "p(A) ∧", "p(A) q(A)", "p(A) # q(A)", ""])
def test_unreadable_fol_is_an_error(bad):
    with pytest.raises(FOLSyntaxError):
        fol_to_lean(bad)


# Random ProverQA-notation formulas: their Lean rendering must parse to the same tree.
_names = st.sampled_from(["p", "q", "is_red", "likes"])
_consts = st.sampled_from(["Alice", "Bob", "rex"])


def _tree(depth: int, bound: tuple):
    args = st.lists(st.sampled_from(list(bound)) if bound else _consts, min_size=1, max_size=2)
    atom = st.tuples(_names, args | st.lists(_consts, min_size=1, max_size=2)).map(lambda t: ("pred",) + t)
    if depth == 0:
        return atom
    sub = _tree(depth - 1, bound)
    quant_var = "y" if "x" in bound else "x"
    return st.one_of(
        atom,
        sub.map(lambda a: ("not", a)),
        st.tuples(st.sampled_from(["and", "or", "imp", "iff", "xor"]), sub, sub),
        st.tuples(st.sampled_from(["all", "ex"]), st.just(quant_var), _tree(depth - 1, bound + (quant_var,))),
    )


def _fol_text(t, spaces) -> str:
    sp = spaces.draw(st.sampled_from(["", " ", "  "])) if hasattr(spaces, "draw") else " "
    kind = t[0]
    if kind == "pred":
        return f"{t[1]}({(','+sp).join(t[2])})"
    if kind == "not":
        return f"¬{sp}({_fol_text(t[1], spaces)})"
    if kind in ("all", "ex"):
        return f"{'∀' if kind == 'all' else '∃'}{t[1]}{sp}({_fol_text(t[2], spaces)})"
    sym = {"and": "∧", "or": "∨", "imp": "→", "iff": "↔", "xor": "⊕"}[kind]
    return f"({_fol_text(t[1], spaces)}){sp}{sym}{sp}({_fol_text(t[2], spaces)})"


def _expected(t, bound=()):
    kind = t[0]
    if kind == "pred":
        return Pred(t[1], tuple(Var(a) if a in bound else Const(a) for a in t[2]))
    if kind == "not":
        return Not(_expected(t[1], bound))
    if kind in ("all", "ex"):
        return (Forall if kind == "all" else Exists)(t[1], _expected(t[2], bound + (t[1],)))
    cls = {"and": And, "or": Or, "imp": Implies, "iff": Iff, "xor": Xor}[kind]
    return cls(_expected(t[1], bound), _expected(t[2], bound))


@settings(max_examples=150, deadline=None)
@given(tree=_tree(3, ()), data=st.data())
def test_rendered_lean_parses_back_to_the_same_formula(tree, data):
    text = _fol_text(tree, data)
    assert parse(fol_to_lean(text)) == _expected(tree)


# ---------------------------------------------------------------- records
def _records():
    return json.loads((FIXTURES / "proverqa_dev.json").read_text(encoding="utf-8"))


def test_records_map_premises_in_order_with_duplicates_dropped():
    recs = _records()
    p = problem_from_proverqa_record(recs[1], "hard")
    assert p.id == "pqa-hard-0012" and p.kind == "true_false_uncertain" and p.source == "proverqa"
    assert [x.id for x in p.premises] == ["h1", "h2", "h3", "h4", "h5", "h6"]
    assert [x.formal for x in p.premises] == [
        "dog Rex", "∀ x, dog x → loyal x", "∀ x, (loyal x ∧ likes x Sam) → happy x", "likes Rex Sam",
        "∃ x, grumpy x", "Xor' (happy Rex) (grumpy Rex)"]
    assert p.premises[3].text == "Rex likes Sam." and p.extra["duplicate_premises_dropped"] == 1
    assert p.goal == "¬ grumpy Rex" and p.answer == "A" and p.answer_label == "True"
    assert p.options == {"A": "True", "B": "False", "C": "Uncertain"}
    p.validate()


def test_fixture_labels_are_confirmed_by_the_verifier(z3, prover9):
    problems = [problem_from_proverqa_record(r, "hard") for r in _records()]
    assert [p.answer_label for p in problems] == ["False", "True", "Uncertain"]
    assert verified_labels(problems, z3) == ["False", "True", "Uncertain"]
    from prosfi.data.labels import label_entailments

    proofs = prover9.check_many([label_entailments(problems[0])[1], label_entailments(problems[1])[0]])
    assert [v.status.value for v in proofs] == ["valid", "valid"]


def test_record_without_formal_premises_is_refused():
    rec = {k: v for k, v in _records()[0].items() if k != "nl2fol"}
    with pytest.raises(ValueError, match="nl2fol"):
        problem_from_proverqa_record(rec, "train")
    rec = dict(_records()[0], nl2fol={"Broken.": "p(A"})
    with pytest.raises(ValueError, match=r"field 'nl2fol\[0\]'"):
        problem_from_proverqa_record(rec, "easy")


def test_loader_reads_a_local_copy_and_the_cli_writes_it(tmp_path):
    problems = load_proverqa("easy", path=str(FIXTURES / "proverqa_dev.json"), limit=2)
    assert [p.id for p in problems] == ["pqa-easy-0000", "pqa-easy-0001"]
    out = tmp_path / "pqa.jsonl"
    assert main(["data", "proverqa", "--split", "medium", "--file", str(FIXTURES / "proverqa_dev.json"),
                 "-o", str(out)]) == 0
    assert [p.answer for p in read_problems(out, validate=True)] == ["B", "A", "C"]


def test_loader_skips_records_it_cannot_formalise(tmp_path, capsys):
    recs = _records()
    broken = dict(recs[0], nl2fol={"Odd.": "p(A) = q(A)"})
    path = tmp_path / "dev.json"
    path.write_text(json.dumps([recs[0], broken, recs[2]], ensure_ascii=False), encoding="utf-8")
    skipped: list = []
    problems = load_proverqa("easy", path=str(path), skipped=skipped)
    assert [p.id for p in problems] == ["pqa-easy-0000", "pqa-easy-0002"]
    assert len(skipped) == 1 and skipped[0][0] == 1 and "nl2fol[0]" in skipped[0][1]
    assert main(["data", "proverqa", "--split", "easy", "--file", str(path), "-o", str(tmp_path / "o.jsonl")]) == 0
    assert "skipped 1 record(s)" in capsys.readouterr().err
    path.write_text(json.dumps([broken]), encoding="utf-8")
    with pytest.raises(ValueError, match="no ProverQA record could be formalised"):
        load_proverqa("easy", path=str(path))


def test_unreachable_hub_is_a_clear_error(tmp_path, monkeypatch, capsys):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    assert main(["data", "proverqa", "--split", "hard", "-o", str(tmp_path / "x.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "opendatalab/ProverQA" in err and "dev/hard.json" in err and "--file" in err
    assert main(["data", "kk", "--hub", "--people", "3", "-o", str(tmp_path / "y.jsonl")]) == 1
    assert "K-and-K/knights-and-knaves" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()


# ---------------------------------------------------------------- generator
_IDENT = re.compile(r"^[a-z][a-z0-9_]*$")


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard", "extra"])
def test_generated_labels_are_confirmed_by_the_verifier_and_prover9(difficulty, z3, prover9):
    problems = pqa_gen.generate(pqa_gen.FOLGenConfig(difficulty=difficulty), count=6, seed=5)
    lo, hi = pqa_gen.DEPTHS[difficulty]
    assert Counter(p.answer_label for p in problems) == {"True": 2, "False": 2, "Uncertain": 2}
    for p in problems:
        p.validate()
        assert p.id.startswith(f"fol-{difficulty}-") and lo <= p.extra["depth"] <= hi
        assert len(p.extra["proof"]) == p.extra["depth"]
        names = {tok for prem in p.premises for tok in re.findall(r"[^\s(),¬∧∨→↔∀∃']+", prem.formal)}
        names -= {"x", "Xor"}
        assert all(_IDENT.match(n) and n not in RESERVED for n in names), names
    assert verified_labels(problems, z3) == [p.answer_label for p in problems]
    # Prover9 finds a proof of the goal (True) or of its negation (False)
    decided = [p for p in problems if p.answer_label != "Uncertain"]
    from prosfi.data.labels import label_entailments

    checks = [label_entailments(p)[0 if p.answer_label == "True" else 1] for p in decided]
    assert [v.status.value for v in prover9.check_many(checks)] == ["valid"] * len(decided)


def test_fol_cli_confirms_labels_and_is_deterministic(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["data", "fol", "--difficulty", "medium", "--count", "6", "--seed", "3", "-o", str(a)]) == 0
    assert "all 6 labels confirmed" in capsys.readouterr().err
    assert main(["data", "fol", "--difficulty", "medium", "--count", "6", "--seed", "3", "--no-verify",
                 "-o", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    c = tmp_path / "c.jsonl"
    main(["data", "fol", "--difficulty", "medium", "--count", "6", "--seed", "4", "--no-verify",
          "-o", str(c)])
    assert c.read_bytes() != a.read_bytes()
