"""The Domain seam for the PRM tools and eval (issue #29): a toy third domain, defined and registered here
only, goes through `prosfi eval`'s scoring, metrics, report and plots and through the PRM labelling, CSP
pairs and search step reading without a line of prosfi changed; and no module of `prosfi.prm` or
`prosfi.eval` branches on a problem kind or a domain's name.

The completion-format seam (`prosfi.rewards.formats`) likewise: a toy format ("bare": the total alone, no
tags), registered here only under its own reward mode, goes through the GRPO rows, eval's prompts, the reward
functions and eval's scoring; and no module of the layers above the domains spells a reward mode or format
that is not the steps one (`direct_lean`, `lean_proof`) outside the one mapping.

The toy domain ("tally"): add up the givens. A step `{"id": "s1", "sum": ["n1", "n2"], "value": 5}` is
valid when it cites known ids and its value is their sum; citing an unknown id is guard `citation`, which
the domain reports as its eval rate `bad_citation_rate`.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

import prosfi
from prosfi import domains
from prosfi.chain import ChainResult, StepResult
from prosfi.data import problem as problem_module
from prosfi.data.problem import Problem
from prosfi.domains import Domain, EvalColumn, domain_for, register
from prosfi.jsonl import loads
from prosfi.rewards import formats
from prosfi.rewards.formats import CompletionFormat, format_for, register_format
from prosfi.rewards.score import ScoreResult
from prosfi.trace.schema import parse_trace

KIND = "tally"


# ------------------------------------------------------------------ the toy domain (this file only)
@dataclass(frozen=True)
class TallyClaim:
    value: int | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.value is not None

    def render(self) -> str:
        return "" if self.value is None else str(self.value)


@dataclass(frozen=True)
class TallyStepResult(StepResult):
    guard: str | None = None

    def to_json(self) -> dict:
        out = super().to_json()
        if self.guard:
            out["guard"] = self.guard
        return out


class TallyCheck:
    """The `ChainBatch` protocol for an in-process check: both rounds ask the verifier nothing."""

    def __init__(self, problem: Problem, steps, claim: TallyClaim, establish: bool) -> None:
        self.problem, self.steps, self.claim, self.establish = problem, tuple(steps), claim, establish

    def key(self) -> tuple:
        return (self.problem.id, json.dumps(self.steps, sort_keys=True), self.claim.value, self.establish)

    def round1(self) -> list:
        return []

    def round2(self, verdicts) -> list:
        return []

    def finish(self, verdicts) -> ChainResult:
        known = {str(g["id"]): int(g["value"]) for g in self.problem.givens}
        results, last = [], None
        for s in self.steps:
            missing = [c for c in s["sum"] if c not in known]
            if missing:
                results.append(TallyStepResult(s["id"], "rejected", f"cites unknown {missing[0]}", guard="citation"))
                continue
            total = sum(known[c] for c in s["sum"])
            ok = total == s["value"]
            results.append(TallyStepResult(s["id"], "valid" if ok else "invalid", "" if ok else f"sum is {total}"))
            known[s["id"]] = s["value"]
            last = s["value"]
        all_ok = bool(results) and all(r.verified for r in results)
        established = self.establish and last == self.problem.answer["value"] == self.claim.value
        return ChainResult(tuple(results), all_ok, established, "" if all_ok and established else "not established")


def tally_step(raw) -> dict:
    if not isinstance(raw, dict) or not isinstance(raw.get("sum"), list) or not isinstance(raw.get("value"), int):
        raise TypeError("a tally step has `id`, a list `sum` and an integer `value`")
    return {"id": str(raw["id"]), "sum": [str(c) for c in raw["sum"]], "value": raw["value"]}


def _read_steps(body: str, ids) -> tuple[tuple, list[str]]:
    data, why = loads(body)
    if why is not None or not isinstance(data, list):
        return (), [f"steps: not a JSON array ({why})"]
    steps, errors = [], []
    for raw in data:
        try:
            steps.append(tally_step(raw))
        except (ValueError, TypeError, KeyError) as exc:
            errors.append(str(exc))
    return tuple(steps), errors


class TallyDomain(Domain):
    name = "tally"
    kinds = (KIND,)
    system_prompt = "Add up the givens. Each step sums cited ids: {\"id\", \"sum\": [ids], \"value\"}."
    pair_margin = 0.25
    eval_columns = (EvalColumn("bad_citation_rate", "bad_citations", "bad citations", ("citation",)),)

    def parse_trace(self, problem, completion):
        return parse_trace(completion, [str(g["id"]) for g in problem.givens], _read_steps)

    def as_step(self, raw):
        return tally_step(raw)

    def step_object(self, step):
        return tally_step(step)

    def parse_answer(self, problem, text):
        text = (text or "").strip()
        return TallyClaim(int(text)) if text.lstrip("-").isdigit() else TallyClaim(reason="not a number")

    def answer_correct(self, problem, claim):
        return claim.ok and claim.value == problem.answer["value"]

    def chain_check(self, problem, steps, claim, config, state, establish=True):
        return TallyCheck(problem, steps, claim, establish)

    def gold_steps(self, problem):
        ids = [str(g["id"]) for g in problem.givens]
        values = [int(g["value"]) for g in problem.givens]
        steps, prev, total = [], ids[0], values[0]
        for i, (gid, v) in enumerate(zip(ids[1:], values[1:]), 1):
            total += v
            steps.append({"id": f"s{i}", "sum": [prev, gid], "value": total})
            prev = f"s{i}"
        return steps

    def gold_completion(self, problem, verifier=None):
        return render(self.gold_steps(problem), problem.answer["value"])

    def sloppy_completion(self, problem):
        return render([{"id": "s1", "sum": ["n1"], "value": problem.answer["value"]}], problem.answer["value"])

    def answer_text(self, problem):
        return str(problem.answer["value"])

    def perturbations(self, problem, prefix, chosen, per_kind=None):
        """The last cited id swapped for another given: a right sum of the wrong numbers."""
        known = {str(g["id"]): int(g["value"]) for g in problem.givens}
        known.update({s["id"]: s["value"] for s in prefix})
        out = []
        for other in known:
            if other in chosen["sum"]:
                continue
            cited = chosen["sum"][:-1] + [other]
            out.append(("wrong_operand", {**chosen, "sum": cited, "value": sum(known[c] for c in cited)}))
        return out

    def pair_context(self, problem):
        return {"givens": [dict(g) for g in problem.givens]}

    def user_prompt(self, problem):
        return problem.question + "\n" + "\n".join(f"{g['id']} = {g['value']}" for g in problem.givens)

    def few_shot_examples(self, kind, k):
        return []

    def content_key(self, problem):
        return (KIND, tuple(int(g["value"]) for g in problem.givens))


def render(steps, answer) -> str:
    return f"<think>add</think><steps>{json.dumps(steps)}</steps><answer>{answer}</answer>"


def tally(pid: str, *values: int) -> Problem:
    return Problem(id=pid, kind=KIND, premises=[], source="tally", question="Add them up.", difficulty=len(values),
                   givens=[{"id": f"n{i}", "value": v} for i, v in enumerate(values, 1)],
                   answer={"value": sum(values)})


@pytest.fixture()
def toy(monkeypatch):
    """The toy domain registered for one test; the registry is restored after it."""
    monkeypatch.setattr(domains, "_LOADED", dict(domains._LOADED))
    monkeypatch.setattr(problem_module, "KINDS", dict(problem_module.KINDS))
    return register(TallyDomain())


PROBLEMS = [tally("t1", 2, 3, 4), tally("t2", 5, 6)]


# ------------------------------------------------------------------ the layers, on the toy domain
def test_registering_makes_the_kind_known_and_refuses_a_second_owner(toy):
    assert domain_for(PROBLEMS[0]) is toy and "tally" in domains.domain_names()
    assert problem_module.KINDS[KIND] == "tally"  # the one list of kinds: a record of the new kind now reads
    assert Problem.from_dict(PROBLEMS[0].to_dict()).kind == KIND
    with pytest.raises(ValueError, match="registered already"):
        register(TallyDomain())


def test_eval_scores_reports_and_plots_the_toy_domains_own_rate(toy, tmp_path):
    from prosfi.eval.evaluate import evaluate
    from prosfi.eval.generate import Generation

    t1, t2 = PROBLEMS
    gens = [Generation("t1", 0, toy.gold_completion(t1)),
            Generation("t1", 1, render([{"id": "s1", "sum": ["n1", "n9"], "value": 9}], 9)),  # unknown n9
            Generation("t2", 0, toy.gold_completion(t2)),
            Generation("t2", 1, toy.sloppy_completion(t2))]  # n1 alone is 5, not 11
    result = evaluate(PROBLEMS, gens, out_dir=tmp_path / "run")
    s = result.summary
    groups = {g["difficulty"]: g for g in s["groups"]}
    assert groups["3"]["bad_citation_rate"] == 0.3333 and groups["2"]["bad_citation_rate"] == 0.0  # 1 of 3; 0 of 2
    assert s["overall"]["bad_citation_rate"] == 0.2 and s["overall"]["reward_hit"] == 0.5
    md = (tmp_path / "run" / "summary.md").read_text()
    assert "| bad citations |" in md and "| 20.0 [" in md
    assert (tmp_path / "run" / "bad_citation_rate.png").is_file()
    recs = [json.loads(line) for line in (tmp_path / "run" / "completions.jsonl").read_text().splitlines()]
    assert [r["bad_citations"] for r in recs] == [0, 1, 0, 0] and recs[1]["guarded_steps"] == 1


def test_prm_labels_pairs_and_search_steps_of_the_toy_domain(toy):
    from prosfi.prm.label import label_completions
    from prosfi.prm.negatives import csp_pairs, natural_pairs
    from prosfi.prm.search import read_step
    from prosfi.verify import Verifier, VerifierConfig

    t1 = PROBLEMS[0]
    bad = render([{"id": "s1", "sum": ["n1", "n2"], "value": 5}, {"id": "s2", "sum": ["s1", "n3"], "value": 10}], 10)
    items = [{"problem_id": "t1", "completion": toy.gold_completion(t1)}, {"problem_id": "t1", "completion": bad}]
    with Verifier(VerifierConfig(backends=("z3",), workers=0)) as verifier:  # asked nothing: the toy checks itself
        records, stats = label_completions({"t1": t1}, items, verifier)
    assert [r["labels"] for r in records] == [[True, True], [True, False]] and stats.format_failures == 0
    assert records[1]["first_error"] == 1 and records[0]["prompt"] == toy.user_prompt(t1)
    assert "grounded" not in records[0]  # the toy domain has no groundedness
    assert json.loads(records[0]["completions"][0]) == {"id": "s1", "sum": ["n1", "n2"], "value": 5}

    counts: dict = {}
    pairs = csp_pairs(t1, None, per_kind=1, stats=counts)
    assert pairs and all(p["margin"] == 0.25 and p["kind"] == "wrong_operand" for p in pairs)
    assert all(p["givens"] == t1.givens and p["rejected"]["value"] != p["chosen"]["value"] for p in pairs)
    assert counts["gold_steps"] == 2 and counts["wrong_operand_candidates"] == 2  # one twin per gold step
    assert natural_pairs(t1, [toy.gold_steps(t1)], None) == []  # natural negatives need a groundedness

    assert read_step(' {"id": "s1", "sum": ["n1", "n2"], "value": 5}, {', toy).step["sum"] == ["n1", "n2"]
    assert read_step('{"id": "s1", "conclusion": "A"}', toy).reason.startswith("schema: a tally step")


# ------------------------------------------------------------------ the toy completion format (this file only)
BARE_MODE = "bare_total"
BARE_PROMPT = "Reply with the total alone: no tags, no steps."


def _bare_answer(gold: int, text: str):
    """(format ok, answer correct, the answer) of a bare completion: one integer, nothing else."""
    text = text.strip()
    if not text.lstrip("-").isdigit():
        return False, False, None
    return True, int(text) == gold, text


class BareReward:
    def __init__(self, reward_config) -> None:
        self.levels, self.__name__ = reward_config, f"{reward_config.mode}_reward"

    def __call__(self, prompts=None, completions=None, answer=None, **kwargs):
        """Reads the rows' `answer` column (the toy kind is not in Problem.from_dict's own list of kinds)."""
        out = []
        for gold, text in zip(answer, completions):
            ok, right, _ = _bare_answer(int(gold), text)
            out.append(self.levels.right_verified if right else self.levels.wrong_answer if ok
                       else self.levels.format_failure)
        return out


class BareFormat(CompletionFormat):
    name = "bare"
    title = "bare"
    few_shot = False
    gold_traces = False
    served = False

    def prompt_rows(self, problems, system_prompt=None, few_shot=0, chain=None):
        from prosfi.domains.prompts import prompt_rows

        return prompt_rows(problems, system_prompt or BARE_PROMPT, 0, user_suffix=lambda p: "The total is?")

    def reward_funcs(self, reward_config, chain_config=None, verifier=None, audit_path=None, *,
                     asynchronous=False, lean_config=None):
        return [BareReward(reward_config)]

    def unavailable(self, lean_config=None):
        return "needs an abacus: none here"

    def score(self, problems, completions, verifier, reward_config, chain_config=None):
        out = []
        for problem, text in zip(problems, completions):
            ok, right, answer = _bare_answer(problem.answer["value"], text)
            out.append(ScoreResult(problem.id, reward_config.mode, 1.0 if right else 0.0, ok, answer, right,
                                   chain_valid=right, reason="" if ok else "not one integer"))
        return out


@pytest.fixture()
def bare(toy, monkeypatch):
    """The toy format registered for one test (over the toy domain); the format registry is restored after it."""
    monkeypatch.setattr(formats, "_LOADED", dict(formats._LOADED))
    monkeypatch.setattr(formats, "MODE_FORMATS", dict(formats.MODE_FORMATS))
    return register_format(BareFormat(), modes=(BARE_MODE,))


def test_a_registered_format_flows_through_rows_rewards_and_eval_scoring(bare, tmp_path):
    from prosfi.eval.evaluate import evaluate
    from prosfi.eval.generate import Generation, PromptSettings, build_prompts
    from prosfi.rewards import RewardConfig, make_reward_funcs
    from prosfi.train.rows import grpo_dataset

    assert format_for(BARE_MODE) is bare and BARE_MODE in formats.mode_names()
    with pytest.raises(ValueError, match="registered already"):
        register_format(BareFormat(), modes=("another_mode",))
    with pytest.raises(ValueError, match="bare_total select format 'bare' already"):
        register_format(type("Bare2", (BareFormat,), {"name": "bare2"})(), modes=(BARE_MODE,))
    rows = grpo_dataset(PROBLEMS, reward_mode=BARE_MODE)
    assert [r["prompt"][0]["content"] for r in rows] == [BARE_PROMPT] * 2
    assert rows[0]["prompt"][-1]["content"] == TallyDomain().user_prompt(PROBLEMS[0]) + "\n\nThe total is?"
    assert build_prompts(PROBLEMS, PromptSettings(reward_mode=BARE_MODE, few_shot=2)) == [r["prompt"] for r in rows]
    with pytest.raises(ValueError, match=f"few_shot: 0 with reward_mode: {BARE_MODE}"):
        grpo_dataset(PROBLEMS, few_shot=1, reward_mode=BARE_MODE)

    (reward,) = make_reward_funcs(BARE_MODE)
    assert reward.__name__ == "bare_total_reward"
    column = [rows[0]["answer"], rows[0]["answer"], rows[1]["answer"]]
    assert reward(completions=["9", "12", "eleven"], answer=column, problem=[""] * 3) == [1.0, 0.1, 0.0]

    gens = [Generation("t1", 0, "9"), Generation("t1", 1, "8"), Generation("t2", 0, " 11\n"),
            Generation("t2", 1, "<answer>11</answer>")]
    result = evaluate(PROBLEMS, gens, reward_config=RewardConfig(mode=BARE_MODE), out_dir=tmp_path / "run")
    overall = result.summary["overall"]
    assert overall["accuracy"] == 0.5 and overall["format_rate"] == 0.75 and overall["reward_hit"] == 0.5
    assert result.summary["reward_mode"] == BARE_MODE
    assert [r["mode"] for r in result.records] == [BARE_MODE] * 4


def test_recipe_checks_and_preflight_ask_the_format(bare):
    from prosfi.train.config import ProsfiScriptArguments, validate
    from prosfi.train.preflight import RecipeError, check_backends

    with pytest.raises(ValueError, match="not the bare one; set sft: false with reward_mode: bare_total"):
        validate(ProsfiScriptArguments(reward_mode=BARE_MODE, sft=True))
    script = ProsfiScriptArguments(reward_mode=BARE_MODE)
    validate(script)
    with pytest.raises(RecipeError, match="reward_mode bare_total needs an abacus: none here"):
        check_backends(script)


# ------------------------------------------------------------------ no kind above the domains
ROOT = Path(prosfi.__file__).parent
LAYERS = ("rewards", "eval", "train", "prm", "serve", "integrations")  # every layer above the domains
# Documented exceptions: (module, string) pairs allowed, each with its reason. None today.
ALLOWED: set[tuple[str, str]] = set()


def _names() -> set[str]:
    """What only a domain may spell: its kinds, its name and its eval columns' names and headings."""
    columns = domains.eval_columns()
    return (set(problem_module.KINDS) | set(domains.domain_names()) | {c.metric for c in columns}
            | {c.record for c in columns} | {c.heading for c in columns})


def _kind_knowledge(path: Path, names: set[str]) -> list[str]:
    """Every comparison of a `.kind`/`.name` attribute with one of `names`, and every string constant
    (docstrings aside) that is one of them."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if node.value in names:
                found.append(f"{path.name}:{node.lineno}: the string {node.value!r}")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            subject = any(isinstance(s, ast.Attribute) and s.attr in ("kind", "name") for s in sides)
            strings = [s.value for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)]
            if subject and any(v in names for v in strings):
                found.append(f"{path.name}:{node.lineno}: compares a kind or domain name")
    return found


def test_no_module_above_the_domains_knows_a_kind_or_a_domain():
    names = _names()
    assert {"logic", "quantity", "assignment", "true_false_uncertain", "dimension_error_rate"} <= names
    hits = [h for layer in LAYERS for path in sorted((ROOT / layer).rglob("*.py"))
            for h in _kind_knowledge(path, names) if (f"prosfi.{layer}.{path.stem}", h) not in ALLOWED]
    assert hits == []


def test_the_kind_check_sees_a_planted_branch(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('"""the logic domain"""\n'
                       'def f(p, d):\n    if p.kind == "quantity":\n        return 1\n    return d.name != "logic"\n')
    assert len(_kind_knowledge(planted, {"logic", "quantity"})) == 4  # two compares, two strings; not the docstring


# ------------------------------------------------------------------ no reward format above the domains
FORMAT_LAYERS = ("rewards", "train", "eval", "prm", "serve", "integrations")
# Where a mode or format other than the steps one may be spelled, each with its reason: the mapping from the
# user's spelling (`reward_mode: direct_lean`) to the format, and the format's registry entry; the format's own
# definition names itself.
FORMAT_ALLOWED = {
    ("prosfi.rewards.formats", "direct_lean"),  # MODE_FORMATS: the one mapping of the user's reward mode
    ("prosfi.rewards.formats", "lean_proof"),  # MODE_FORMATS' value and _REGISTRY's key
    ("prosfi.rewards.direct_lean", "lean_proof"),  # DirectLeanFormat.name: the format's own module
}


def _format_names() -> set[str]:
    """The reward modes and formats that are not the steps one (the steps format's modes, `prosfi`, `format`,
    ..., are also ordinary words and the steps scoring's own modes)."""
    return ({m for m, f in formats.MODE_FORMATS.items() if f != formats.DEFAULT_FORMAT}
            | set(formats.MODE_FORMATS.values()) - {formats.DEFAULT_FORMAT})


def _format_knowledge(path: Path, module: str, names: set[str]) -> list[str]:
    """Every string constant (docstrings aside) that is one of `names`, outside FORMAT_ALLOWED; a
    comparison with one is such a constant too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [f"{module}:{node.lineno}: the string {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and node.value in names and (module, node.value) not in FORMAT_ALLOWED]


def test_no_layer_above_the_domains_special_cases_a_reward_format():
    names = _format_names()
    assert names == {"direct_lean", "lean_proof"}
    hits = []
    for layer in FORMAT_LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            parts = path.relative_to(ROOT.parent).with_suffix("").parts
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            hits += _format_knowledge(path, module, names)
    assert hits == []


def test_the_format_check_sees_a_planted_branch(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('"""reward_mode direct_lean"""\n'
                       'def f(script):\n    if script.reward_mode == "direct_lean":\n        return "lean_proof"\n')
    assert len(_format_knowledge(planted, "prosfi.train.planted", {"direct_lean", "lean_proof"})) == 2
