"""A seeded offline generator of ProverQA-style problems (rule chains with distractors).

A chain starts from a fact about one entity and applies `depth` rules, each an atomic step:
`∀ x, A x → B x`, `∀ x, (A x ∧ C x) → B x` with `C` given, `∀ x, (A x ∨ C x) → B x`, or an
exclusive-or fact `Xor' (A e) (B e)` that turns `A e` into `¬ B e`. Literals may be negated and may
use binary predicates (`admires x eve`). The last step concludes the goal (True) or its negation
(False); for Uncertain the chain ends next to the goal without deciding it (a converse rule, or a
rule that needs a fact nobody gives). Distractor facts and rules use other entities or fresh
predicates, so they never decide the goal. The derivation is kept in `extra["proof"]` for gold traces.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from prosfi.data.pqa_vocab import BINARY, ENTITIES, UNARY
from prosfi.data.problem import Premise, Problem, problem_id

DEPTHS = {"easy": (1, 2), "medium": (3, 5), "hard": (6, 9), "extra": (10, 14)}
LABELS = ("True", "False", "Uncertain")
OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}
LETTER = {v: k for k, v in OPTIONS.items()}
QUESTION = "Based on the above information, is the following statement true, false, or uncertain? {goal}"


@dataclass(frozen=True)
class FOLGenConfig:
    """Controls for the ProverQA-style generator."""

    difficulty: str = field(default="hard", metadata={"help": "easy (1-2 steps), medium (3-5), hard (6-9), "
                                                      "extra (10-14)"})
    distractor_rules: int = field(default=-1, metadata={"help": "distractor rules per problem; -1: 1 to "
                                                        "2 + depth/3, drawn per problem"})
    distractor_facts: int = field(default=-1, metadata={"help": "distractor facts per problem; -1: 1 to "
                                                        "2 + depth/4, drawn per problem"})
    binary_prob: float = field(default=0.15,
                               metadata={"help": "chance a chain literal uses a binary predicate"})
    negation_prob: float = field(default=0.3, metadata={"help": "chance a chain literal is negated"})

    def __post_init__(self):
        if self.difficulty not in DEPTHS:
            raise ValueError(f"difficulty: {self.difficulty!r} is not one of {', '.join(DEPTHS)}")


@dataclass(frozen=True)
class Lit:
    """A literal over one subject: `pred s` / `pred s obj`, maybe negated, with its English phrases."""

    pred: str
    pos: str
    neg: str
    obj: str | None = None
    positive: bool = True

    def formula(self, subject: str) -> str:
        atom = f"{self.pred} {subject}" + (f" {self.obj}" if self.obj else "")
        return atom if self.positive else f"¬ {atom}"

    def phrase(self) -> str:
        text = self.pos if self.positive else self.neg
        return text.format(o=(self.obj or "").capitalize())

    def negated(self) -> "Lit":
        return replace(self, positive=not self.positive)


class _Builder:
    """Holds one problem's fresh-name pools and premises while it is being built."""

    def __init__(self, rng: random.Random, cfg: FOLGenConfig):
        self.rng = rng
        self.cfg = cfg
        self.unary = list(UNARY)
        rng.shuffle(self.unary)
        self.entities = list(ENTITIES)
        rng.shuffle(self.entities)
        self.subject = self.entities.pop()
        self.premises: list[tuple[str, str, str]] = []  # (key, formal, text)
        self.proof: list[dict] = []
        self.used_binary: set[tuple[str, str]] = set()

    # -- names
    def fresh(self, positive: bool = True) -> Lit:
        if not self.unary:
            raise ValueError("ran out of predicate names; lower the distractor counts")
        pred, pos, neg = self.unary.pop()
        return Lit(pred, pos, neg, positive=positive)

    def fresh_binary(self) -> Lit:
        for _ in range(50):
            pred, pos, neg = self.rng.choice(BINARY)
            obj = self.rng.choice(self.entities)
            if (pred, obj) not in self.used_binary:
                self.used_binary.add((pred, obj))
                return Lit(pred, pos, neg, obj=obj)
        return self.fresh()

    # -- premises
    def add(self, formal: str, text: str) -> str:
        key = f"p{len(self.premises)}"
        self.premises.append((key, formal, text))
        return key

    def fact(self, lit: Lit, who: str) -> str:
        return self.add(lit.formula(who), f"{who.capitalize()} {lit.phrase()}.")

    def rule(self, ante: list[Lit], cons: Lit, joiner: str = "∧") -> str:
        if len(ante) == 1:
            lhs = ante[0].formula("x")
        else:
            lhs = "(" + f" {joiner} ".join(a.formula("x") for a in ante) + ")"
        formal = f"∀ x, {lhs} → {cons.formula('x')}"
        word = "and" if joiner == "∧" else "or"
        cond = f" {word} ".join(a.phrase() for a in ante)
        text = self.rng.choice((
            f"Anyone who {cond} {cons.phrase()}.",
            f"If a person {cond}, then that person {cons.phrase()}.",
            f"Everyone who {cond} {cons.phrase()}.",
        ))
        return self.add(formal, text)

    def step(self, deps: list[str], conclusion: str, rule: str) -> str:
        sid = f"s{len(self.proof) + 1}"
        self.proof.append({"id": sid, "dependencies": deps, "conclusion": conclusion, "rule": rule})
        return sid

    # -- the chain
    def next_literal(self, allow_binary: bool) -> Lit:
        if allow_binary and self.rng.random() < self.cfg.binary_prob:
            return self.fresh_binary()
        return self.fresh(positive=self.rng.random() >= self.cfg.negation_prob)

    def chain(self, depth: int, final: Lit | None) -> tuple[Lit, list[Lit]]:
        """Apply `depth` rules from a start fact; the last conclusion is `final` when given."""
        s = self.subject
        cur = self.fresh()
        ref = self.fact(cur, s)
        seen = [cur]
        for k in range(1, depth + 1):
            target = final if (k == depth and final is not None) else self.next_literal(allow_binary=True)
            forms = ["simple", "simple", "conj", "disj"]
            if cur.positive and not target.positive and cur.obj is None and target.obj is None:
                forms.append("xor")
            form = self.rng.choice(forms)
            if form == "simple":
                r = self.rule([cur], target)
                ref = self.step([r, ref], target.formula(s), "modus_ponens")
            elif form == "conj":
                extra = self.fresh(positive=self.rng.random() >= self.cfg.negation_prob)
                ante = [cur, extra] if self.rng.random() < 0.5 else [extra, cur]
                r = self.rule(ante, target, "∧")
                f = self.fact(extra, s)
                ref = self.step([r, ref, f], target.formula(s), "modus_ponens")
            elif form == "disj":
                other = self.fresh()
                ante = [cur, other] if self.rng.random() < 0.5 else [other, cur]
                r = self.rule(ante, target, "∨")
                ref = self.step([r, ref], target.formula(s), "modus_ponens")
            else:  # Xor' (A s) (B s) with A s known gives ¬ B s
                b = target.negated()
                x = self.add(f"Xor' ({cur.formula(s)}) ({b.formula(s)})",
                             f"Either {s.capitalize()} {cur.phrase()} or {s.capitalize()} {b.phrase()}, "
                             f"but not both.")
                ref = self.step([x, ref], target.formula(s), "exclusive_disjunction_elimination")
            cur = target
            seen.append(cur)
        return cur, seen

    def distractors(self, chain_lits: list[Lit], depth: int) -> None:
        rng = self.rng
        n_rules = self.cfg.distractor_rules
        if n_rules < 0:
            n_rules = rng.randint(1, 2 + depth // 3)
        n_facts = self.cfg.distractor_facts
        if n_facts < 0:
            n_facts = rng.randint(1, 2 + depth // 4)
        for _ in range(n_rules):
            cons = self.fresh(positive=rng.random() >= self.cfg.negation_prob)
            if rng.random() < 0.5:  # a rule that fires along the chain but leads nowhere
                self.rule([rng.choice(chain_lits)], cons)
            else:
                self.rule([self.fresh(positive=rng.random() >= 0.2)], cons)
        for _ in range(n_facts):
            who = rng.choice(self.entities)
            if rng.random() < 0.5:  # the chain's start holds for someone else too
                self.fact(chain_lits[0], who)
            else:
                lit = self.fresh(positive=rng.random() >= self.cfg.negation_prob)
                self.fact(lit, rng.choice((who, self.subject)))


def generate_one(rng: random.Random, cfg: FOLGenConfig, label: str, pid: str) -> Problem:
    lo, hi = DEPTHS[cfg.difficulty]
    depth = rng.randint(lo, hi)
    b = _Builder(rng, cfg)
    s = b.subject
    goal_lit = b.fresh()
    if label == "Uncertain":
        last, lits = b.chain(depth, None)
        if rng.random() < 0.5:  # converse: goal → last (affirming the consequent decides nothing)
            b.rule([goal_lit], last)
        else:  # needs a fact nobody states
            missing = b.fresh()
            b.rule([last, missing], goal_lit, "∧")
    else:
        last, lits = b.chain(depth, goal_lit if label == "True" else goal_lit.negated())
    b.distractors(lits, depth)
    order = list(range(len(b.premises)))
    rng.shuffle(order)
    rename = {b.premises[i][0]: f"h{n + 1}" for n, i in enumerate(order)}
    premises = [Premise(id=rename[b.premises[i][0]], formal=b.premises[i][1], text=b.premises[i][2])
                for i in order]
    proof = [{**st, "dependencies": [rename.get(d, d) for d in st["dependencies"]]} for st in b.proof]
    goal_text = f"{s.capitalize()} {goal_lit.phrase()}."
    return Problem(
        id=pid, kind="true_false_uncertain", premises=premises, source="prosfi_fol",
        context=" ".join(p.text for p in premises), question=QUESTION.format(goal=goal_text),
        goal=goal_lit.formula(s), options=dict(OPTIONS), answer=LETTER[label], difficulty=cfg.difficulty,
        extra={"depth": depth, "proof": proof},
    )


def generate(cfg: FOLGenConfig, count: int, seed: int) -> list[Problem]:
    """`count` problems, labels True/False/Uncertain in turn (equal shares); deterministic in `seed`."""
    rng = random.Random(seed)
    return [generate_one(rng, cfg, LABELS[i % 3], problem_id("fol", cfg.difficulty, seed, i, cfg, "difficulty")) for i in range(count)]
