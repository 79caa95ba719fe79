"""Toy rule chains for the CPU demo: ProverQA-style problems a tiny model can learn in minutes.

A problem is a fact `P e` about one entity, a chain of 1-3 rules `∀ x, A x → B x` leading to the
goal (True) or to its negation through a last rule `∀ x, A x → ¬ B x` (False), plus distractor
rules and facts that never decide the goal. Names come from a small fixed vocabulary of short
words (single tokens for the tiny tokenizer) and premises have no English text, so prompts and
gold traces stay short. Every gold step is one modus ponens from exactly the two ids it cites
(a rule and a fact or earlier step), with a literal conclusion: atomic under any chain guard.

The space of problems is large (tens of thousands of distinct ones), so a demo can draw SFT,
GRPO and held-out evaluation sets that never share a problem (`prosfi.train.problems`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from prosfi.data.problem import Premise, Problem, problem_id

ENTITIES = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal")
PREDICATES = (
    "red", "big", "calm", "kind", "wise", "bold", "shy", "tall", "fast", "cold", "warm", "soft",
    "loud", "rich", "old", "cool", "blue", "dry", "wet", "slow", "sad", "glad", "new", "neat",
)
OPTIONS = {"A": "True", "B": "False"}  # no Uncertain: every toy chain decides its goal
LETTER = {v: k for k, v in OPTIONS.items()}
QUESTION = "True or false?"


@dataclass(frozen=True)
class ToyConfig:
    """Controls for the toy chain generator."""

    min_depth: int = field(default=1, metadata={"help": "fewest rules between the fact and the goal"})
    max_depth: int = field(default=3, metadata={"help": "most rules between the fact and the goal"})
    min_distractors: int = field(default=2, metadata={"help": "fewest distractor premises per problem"})
    distractors: int = field(default=3, metadata={"help": "most distractor premises per problem"})
    entities: int = field(default=len(ENTITIES), metadata={"help": "how many of the entity names to use"})
    predicates: int = field(default=len(PREDICATES), metadata={"help": "how many of the predicate names to use"})
    labels: tuple[str, ...] = field(default=("True", "False"), metadata={"help": "answer labels, drawn in turn"})
    fixed_chain: bool = field(
        default=True,
        metadata={"help": "the chain always runs over the first predicates in vocabulary order about the first "
                  "entity (red ann -> big -> calm -> kind); distractors use the others. A tiny model then needs "
                  "no copying of names, only to find which premise states each rule and how the last one ends. "
                  "False draws every name at random (a 2-layer model did not learn to copy them in minutes)"},
    )

    layout: str = field(
        default="shuffled",
        metadata={"help": "'shuffled': premises in random order (the model must find the fact and each rule); "
                  "'fixed': the fact is h1, the chain's rules h2, h3, ... in order, distractors after, so the "
                  "ids to cite never change and only the rules' signs must be read"},
    )

    def __post_init__(self):
        if self.layout not in ("shuffled", "fixed"):
            raise ValueError(f"layout: 'shuffled' or 'fixed', got {self.layout!r}")
        if not 1 <= self.min_depth <= self.max_depth:
            raise ValueError(f"depth: need 1 <= min_depth <= max_depth, got {self.min_depth}, {self.max_depth}")
        if not 0 <= self.min_distractors <= self.distractors:
            raise ValueError(f"distractors: need 0 <= min_distractors <= distractors, got {self.min_distractors}, "
                             f"{self.distractors}")
        if not 2 <= self.entities <= len(ENTITIES):
            raise ValueError(f"entities: between 2 and {len(ENTITIES)}, got {self.entities}")
        if self.max_depth + 1 + self.distractors > min(self.predicates, len(PREDICATES)):
            raise ValueError("depth + distractors: more predicates than the vocabulary has")
        bad = [x for x in self.labels if x not in ("True", "False")]
        if bad or not self.labels:
            raise ValueError(f"labels: {bad or self.labels!r}; the toy task has True and False answers only")


def _rule(a: str, b: str, negated: bool = False) -> str:
    return f"∀ x, {a} x → {'¬ ' if negated else ''}{b} x"


def generate_one(rng: random.Random, cfg: ToyConfig, label: str, pid: str) -> Problem:
    depth = rng.randint(cfg.min_depth, cfg.max_depth)
    preds = list(PREDICATES[: cfg.predicates])
    if cfg.fixed_chain:
        chain = preds[: depth + 1]
        spare = preds[cfg.max_depth + 1:]
        rng.shuffle(spare)
        who, other = ENTITIES[0], rng.choice(ENTITIES[1: cfg.entities])
    else:
        rng.shuffle(preds)
        chain = preds[: depth + 1]  # chain[0] holds for `who`; chain[-1] is the goal's predicate
        spare = preds[depth + 1:]
        who, other = rng.sample(ENTITIES[: cfg.entities], 2)
    premises: list[tuple[str, str]] = [("fact", f"{chain[0]} {who}")]
    proof: list[dict] = []
    for k in range(1, depth + 1):
        negated = label == "False" and k == depth
        key = f"rule{k}"
        premises.append((key, _rule(chain[k - 1], chain[k], negated)))
        prev = "fact" if k == 1 else f"s{k - 1}"
        proof.append({"id": f"s{k}", "dependencies": [key, prev],
                      "conclusion": f"{'¬ ' if negated else ''}{chain[k]} {who}", "rule": "modus_ponens"})
    for i in range(rng.randint(cfg.min_distractors, cfg.distractors)):
        kind = rng.random()
        if kind < 0.3:  # the chain's start holds for someone else: fires along the chain for them only
            premises.append((f"d{i}", f"{chain[0]} {other}"))
        elif kind < 0.6:  # a rule from a chain predicate to a fresh one: leads nowhere near the goal
            premises.append((f"d{i}", _rule(rng.choice(chain[:-1]), spare.pop())))
        else:  # a rule whose condition nobody has
            premises.append((f"d{i}", _rule(spare.pop(), rng.choice(chain[1:]), rng.random() < 0.5)))
    premises = list({formal: (key, formal) for key, formal in reversed(premises)}.values())[::-1]  # no repeats
    order = list(range(len(premises)))
    if cfg.layout == "fixed":  # fact and rules first, in chain order; only the distractors are shuffled
        tail = order[depth + 1:]
        rng.shuffle(tail)
        order = order[: depth + 1] + tail
    else:
        rng.shuffle(order)
    rename = {premises[i][0]: f"h{n + 1}" for n, i in enumerate(order)}
    proof = [{**s, "dependencies": [rename.get(d, d) for d in s["dependencies"]]} for s in proof]
    return Problem(
        id=pid, kind="true_false_uncertain", source="prosfi_toy",
        premises=[Premise(id=rename[premises[i][0]], formal=premises[i][1]) for i in order],
        question=QUESTION, goal=f"{chain[-1]} {who}", options=dict(OPTIONS), answer=LETTER[label],
        difficulty=depth, extra={"depth": depth, "proof": proof},
    )


EVAL_BUCKETS = 5  # one problem in 5 (by content) is reserved for evaluation: `split="eval"`


def is_eval_problem(problem: Problem) -> bool:
    """Whether a toy problem is in the evaluation share of the space (a hash of its premises, as a set, and
    goal: the same problem with its premises reordered is in the same share)."""
    import zlib

    text = "\n".join(sorted(p.formal for p in problem.premises)) + "\n|" + problem.goal
    return zlib.crc32(text.encode("utf-8")) % EVAL_BUCKETS == 0


def generate(cfg: ToyConfig, count: int, seed: int, split: str | None = None) -> list[Problem]:
    """`count` toy problems, labels in turn; deterministic in `seed`. `split="train"` draws only problems
    outside the evaluation share, `split="eval"` only problems inside it (`is_eval_problem`), so a model
    trained on the one is never evaluated on a problem it saw, whatever the seeds; None draws from both."""
    if split not in (None, "train", "eval"):
        raise ValueError(f"split: 'train', 'eval' or None, got {split!r}")
    rng = random.Random(seed)
    out: list[Problem] = []
    tries = 0
    while len(out) < count:
        label = cfg.labels[len(out) % len(cfg.labels)]
        problem = generate_one(rng, cfg, label, problem_id("toy", split or "any", seed, len(out), cfg))
        tries += 1
        if split is None or is_eval_problem(problem) == (split == "eval"):
            out.append(problem)
        elif tries > 50 * (count + 10):  # pragma: no cover - the shares are 1/5 and 4/5 of a large space
            raise ValueError(f"toy: could not draw {count} {split} problems")
    return out
