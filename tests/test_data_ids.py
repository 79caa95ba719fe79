"""Issue 21, item 5: generated ProverQA-style problems have their own id space, so a run mixing them with
the real ProverQA records (`--data fol:hard proverqa:hard=FILE`) loads both, and completion files keyed
by problem id are not ambiguous."""

from __future__ import annotations

from pathlib import Path

from prosfi.data import pqa_gen
from prosfi.data.proverqa import load_proverqa
from prosfi.eval.sources import load_sources

FIXTURE = Path(__file__).parent / "fixtures" / "proverqa_dev.json"


def test_generated_ids_never_meet_real_proverqa_ids():
    generated = {p.id for d in pqa_gen.DEPTHS for p in pqa_gen.generate(pqa_gen.FOLGenConfig(difficulty=d), 3, 0)}
    real = {p.id for split in ("easy", "medium", "hard") for p in load_proverqa(split, path=str(FIXTURE))}
    assert not generated & real
    assert all(not i.startswith("pqa-") for i in generated) and all(i.startswith("pqa-") for i in real)


def test_a_run_mixing_generated_and_real_proverqa_loads_both():
    sources = load_sources(["fol:hard", f"proverqa:hard={FIXTURE}"], count=3)
    ids = [p.id for s in sources for p in s.problems]
    assert len(ids) == len(set(ids)) == 6
