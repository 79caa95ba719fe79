"""TRL rows: conversational prompts plus the columns the reward functions read."""

from __future__ import annotations

import json

from prosfi.cli import main
from prosfi.data import kk, pqa_gen
from prosfi.data.problem import Problem, write_problems
from prosfi.data.prompts import SYSTEM_PROMPT, user_prompt
from prosfi.domains.prompts import build_dataset, prompt_rows, to_prompt_row

KK = kk.generate(kk.KKConfig(people=3), count=1, seed=0)[0]
FOL = pqa_gen.generate(pqa_gen.FOLGenConfig(difficulty="easy"), count=2, seed=0)[1]


def test_row_carries_messages_and_the_problem_column():
    row = to_prompt_row(FOL)
    assert set(row) == {"prompt", "problem", "problem_id", "kind", "answer"}
    assert [m["role"] for m in row["prompt"]] == ["system", "user"]
    assert row["prompt"][0]["content"] == SYSTEM_PROMPT
    assert Problem.from_dict(json.loads(row["problem"])).to_dict() == FOL.to_dict()
    assert (row["problem_id"], row["kind"], row["answer"]) == (FOL.id, "true_false_uncertain", "B")
    user = row["prompt"][1]["content"]
    for p in FOL.premises:
        assert f"{p.id}: {p.text}\nFormal: {p.formal}" in user
    assert FOL.goal in user and "A) True" in user and "C) Uncertain" in user


def test_assignment_rows_list_atoms_and_the_answer_shape():
    row = to_prompt_row(KK)
    names = KK.extra["names"]
    user = user_prompt(KK)
    assert all(a in user for a in KK.atoms) and f"(1) {names[0]} is a knight/knave" in user
    assert row["answer"] == " ".join(f"({i + 1}) {n} is a {'knight' if KK.assignment[a] else 'knave'}"
                                     for i, (n, a) in enumerate(zip(names, KK.atoms)))


def test_few_shot_adds_solved_examples_of_the_same_kind():
    row = to_prompt_row(KK, few_shot=2)
    roles = [m["role"] for m in row["prompt"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert all("<steps>" in m["content"] and "Knight" in m["content"]
               for m in row["prompt"] if m["role"] == "assistant")
    assert row["prompt"][-1]["content"] == user_prompt(KK)


def test_dataset_and_cli_rows(tmp_path):
    ds = build_dataset([KK, FOL])
    assert ds.column_names == ["prompt", "problem", "problem_id", "kind", "answer"] and len(ds) == 2
    assert ds[0]["prompt"][1]["role"] == "user"
    src, out = tmp_path / "p.jsonl", tmp_path / "rows.jsonl"
    write_problems([KK, FOL], src)
    system = tmp_path / "system.txt"
    system.write_text("Be brief.\n")
    assert main(["data", "prompts", str(src), "--system-prompt-file", str(system), "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows == prompt_rows([KK, FOL], "Be brief.")
