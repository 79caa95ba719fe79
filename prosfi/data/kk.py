"""Knights & Knaves: a seeded puzzle generator, its Lean formalisation, and the public-record mapper.

Claims use the public K&K generator's structure (AlphaPav/mem-kk-logic `lib_kk.py`) so that our
own puzzles and the hub's `statements` field go through one formaliser:
``('telling-truth', i)`` "i is a knight", ``('lying', i)`` "i is a knave", ``('not', s)``,
``('and', s1, s2, …)``, ``('or', …)``, ``('->', s1, s2)``, ``('<=>', s1, s2)``.
Formalisation: one premise per inhabitant, ``Knight x ↔ <claim>``; a knave is ``¬ Knight x``.
"""

from __future__ import annotations

import ast as pyast
import hashlib
import itertools
import random
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from prosfi.data.problem import Premise, Problem, problem_id

Statement = tuple

# Lean-safe first names (lowercased they become constants); none is a Lean keyword.
NAMES = (
    "Zoey", "Oliver", "Emma", "Liam", "Ava", "Noah", "Mia", "Lucas", "Sofia", "Ethan", "Chloe",
    "Mason", "Lily", "Logan", "Grace", "Jacob", "Harper", "Owen", "Ella", "Henry", "Aria", "Samuel",
    "Nora", "David", "Luna", "Daniel", "Ruby", "Jack", "Hazel", "Leo", "Violet", "Isaac", "Stella",
    "Gabriel", "Aurora", "Aiden", "Penelope", "Caleb", "Scarlett", "Wyatt", "Evelyn", "Julian",
    "Abigail", "Levi", "Sebastian", "Victoria", "Matthew", "Riley", "Joseph", "Elijah", "Amelia",
)

PREFIX = ("A very special island is inhabited only by knights and knaves. "
          "Knights always tell the truth, and knaves always lie.")
POSTFIX = "So who is a knight and who is a knave?"
ROLES = ("knight", "knave")  # the truth-teller's and the liar's word; other puzzles say saint/sinner, …


def article(word: str) -> str:
    """`a saint`, `an angel`."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def roles_of(problem: Problem) -> tuple[str, str]:
    """The puzzle's words for knight and knave (`extra["roles"]`, default knight/knave)."""
    r = problem.extra.get("roles") if isinstance(problem.extra.get("roles"), dict) else {}
    return (str(r.get("knight") or ROLES[0]), str(r.get("knave") or ROLES[1]))


_ISLAND = re.compile(r"inhabited only by (\w+?)s and (\w+?)s\b", re.IGNORECASE)


def roles_in_quiz(quiz: str) -> tuple[str, str]:
    """The role words a quiz introduces ("inhabited only by saints and sinners"), else knight/knave."""
    m = _ISLAND.search(quiz or "")
    return (m.group(1).lower(), m.group(2).lower()) if m else ROLES


def question_for(roles: Sequence[str]) -> str:
    return f"Who is {article(roles[0])} and who is {article(roles[1])}?"

# Each template keeps the claim delimited: in double quotes, or after "that" up to the final period.
SAYS = (
    '{name} said that {content}.',
    '{name} told you that {content}.',
    '{name} said, "{content}."',
    '{name} stated, "{content}".',
    'According to {name}, "{content}".',
    '{name} commented, "{content}".',
    'In a statement by {name}: "{content}".',
    '{name} expressed that {content}.',
    '{name} remarked, "{content}".',
    '"{content}," {name} mentioned.',
    '{name} noted, "{content}".',
    'As {name} put it, "{content}".',
    '{name} asserted: "{content}".',
    '{name} claimed that {content}.',
    '"{content}," {name} claimed.',
    '{name} was heard saying, "{content}".',
)


@dataclass(frozen=True)
class KKConfig:
    """Controls for the generator, mirroring the public K&K sampler."""

    people: int = field(default=3, metadata={"help": "inhabitants per puzzle (2-8)"})
    depth: int = field(default=2, metadata={"help": "maximum nesting depth of a claim (1-3)"})
    width: int = field(default=2, metadata={"help": "maximum operands of and/or (2-4)"})
    max_tries: int = field(default=1000, metadata={"help": "samples per puzzle before giving up"})

    def __post_init__(self):
        if not 2 <= self.people <= 8:
            raise ValueError(f"people: {self.people} is outside 2-8")
        if not 1 <= self.depth <= 3:
            raise ValueError(f"depth: {self.depth} is outside 1-3")
        if not 2 <= self.width <= 4:
            raise ValueError(f"width: {self.width} is outside 2-4")


# ---------------------------------------------------------------- semantics
def truth(s: Statement, world: Sequence[bool]) -> bool:
    """Value of a claim in a world (world[i] is True when inhabitant i is a knight)."""
    op = s[0]
    if op == "telling-truth":
        return world[s[1]]
    if op == "lying":
        return not world[s[1]]
    if op == "not":
        return not truth(s[1], world)
    if op == "and":
        return all(truth(x, world) for x in s[1:])
    if op == "or":
        return any(truth(x, world) for x in s[1:])
    if op == "->":
        return (not truth(s[1], world)) or truth(s[2], world)
    if op == "<=>":
        return truth(s[1], world) == truth(s[2], world)
    raise ValueError(f"unknown operator {op!r} in K&K statement")


def solutions(statements: Sequence[Statement]) -> list[tuple[bool, ...]]:
    """All worlds where every inhabitant's status equals the truth of their claim."""
    n = len(statements)
    return [w for w in itertools.product((True, False), repeat=n)
            if all(w[i] == truth(statements[i], w) for i in range(n))]


# ---------------------------------------------------------------- sampling
def _sample_statement(rng: random.Random, cfg: KKConfig, speaker: int, depth: int) -> Statement:
    roll = rng.randint(0, 5)
    if depth <= 1 or roll == 0:
        while True:
            who = rng.randrange(cfg.people)
            kind = rng.choice(("telling-truth", "lying"))
            if not (who == speaker and kind == "lying"):  # "I am a knave" is a paradox
                return (kind, who)
    if roll == 1:
        return ("not", _sample_statement(rng, cfg, speaker, depth - 1))
    if roll in (2, 3):
        k = rng.randint(2, cfg.width)
        return (("and", "or")[roll - 2],) + _distinct(rng, cfg, speaker, depth - 1, k)
    return (("->", "<=>")[roll - 4],) + _distinct(rng, cfg, speaker, depth - 1, 2)


def _distinct(rng: random.Random, cfg: KKConfig, speaker: int, depth: int, k: int) -> tuple:
    """k operands, no two alike ("A and A" is not a claim anyone would make)."""
    while True:
        ops = tuple(_sample_statement(rng, cfg, speaker, depth) for _ in range(k))
        if len(set(ops)) == k:
            return ops


def sample_statements(rng: random.Random, cfg: KKConfig) -> tuple[Statement, ...]:
    """Claims for one puzzle with exactly one solution; ValueError after `max_tries` samples."""
    for _ in range(cfg.max_tries):
        st = tuple(_sample_statement(rng, cfg, i, cfg.depth) for i in range(cfg.people))
        if len(solutions(st)) == 1:
            return st
    raise ValueError(f"no puzzle with a unique solution in {cfg.max_tries} samples ({cfg})")


# ---------------------------------------------------------------- rendering
def render_claim(s: Statement, names: Sequence[str], top: bool = True, roles: Sequence[str] = ROLES) -> str:
    """English for a claim in the puzzle's role words; nested compound parts are bracketed so the text
    stays unambiguous."""
    op = s[0]
    if op == "telling-truth":
        return f"{names[s[1]]} is {article(roles[0])}"
    if op == "lying":
        return f"{names[s[1]]} is {article(roles[1])}"
    if op == "not":
        inner = s[1]
        if inner[0] in ("telling-truth", "lying"):
            role = roles[0] if inner[0] == "telling-truth" else roles[1]
            text = f"{names[inner[1]]} is not {article(role)}"
        else:
            text = f"it is not the case that {render_claim(inner, names, False, roles)}"
    elif op in ("and", "or"):
        text = f" {op} ".join(render_claim(x, names, False, roles) for x in s[1:])
    elif op == "->":
        text = f"if {render_claim(s[1], names, False, roles)} then {render_claim(s[2], names, False, roles)}"
    elif op == "<=>":
        text = f"{render_claim(s[1], names, False, roles)} if and only if {render_claim(s[2], names, False, roles)}"
    else:
        raise ValueError(f"unknown operator {op!r} in K&K statement")
    if top:
        return text
    return f"({text})" if op != "not" or s[1][0] not in ("telling-truth", "lying") else text


def formal_claim(s: Statement, consts: Sequence[str], top: bool = True) -> str:
    """Lean text for a claim; compound operands are parenthesised."""
    op = s[0]
    if op == "telling-truth":
        return f"Knight {consts[s[1]]}"
    if op == "lying":
        return f"¬ Knight {consts[s[1]]}"
    if op == "not":
        inner = formal_claim(s[1], consts, top=False)
        text = f"¬ {inner}"
    elif op in ("and", "or"):
        sym = " ∧ " if op == "and" else " ∨ "
        text = sym.join(formal_claim(x, consts, top=False) for x in s[1:])
    elif op in ("->", "<=>"):
        sym = " → " if op == "->" else " ↔ "
        text = formal_claim(s[1], consts, top=False) + sym + formal_claim(s[2], consts, top=False)
    else:
        raise ValueError(f"unknown operator {op!r} in K&K statement")
    if top or op == "not":
        return text
    return f"({text})"


def premise_formula(speaker: str, claim: Statement, consts: Sequence[str]) -> str:
    """`Knight x ↔ <claim>`, the claim bracketed when it has a binary connective on top."""
    body = formal_claim(claim, consts)
    if claim[0] in ("and", "or", "->", "<=>"):
        body = f"({body})"
    return f"Knight {speaker} ↔ {body}"


def constant_name(name: str) -> str:
    """`Zoey` -> `zoey`: a lowercase ASCII Lean identifier."""
    c = re.sub(r"[^a-z0-9_]", "", name.lower())
    if not c or not c[0].isalpha():
        c = "p_" + c
    return c


def answer_text(names: Sequence[str], world: Sequence[bool], roles: Sequence[str] = ROLES) -> str:
    """The gold answer in the public `solution_text_format` style, one line per inhabitant."""
    return "\n".join(f"({i + 1}) {n} is {article(roles[0] if k else roles[1])}"
                     for i, (n, k) in enumerate(zip(names, world)))


def build_problem(pid: str, names: Sequence[str], statements: Sequence[Statement],
                  rng: random.Random | None = None, quiz: str | None = None,
                  source: str = "knights_knaves", roles: Sequence[str] = ROLES) -> Problem:
    """Problem record for a puzzle; `quiz` given (hub records) or rendered with `rng`-chosen phrasings.
    `roles`: the puzzle's words for knight and knave (premise texts, question and answer use them; the
    formulas keep `Knight x`)."""
    roles = (str(roles[0]).lower(), str(roles[1]).lower())
    sols = solutions(statements)
    if len(sols) != 1:
        raise ValueError(f"{pid}: the puzzle has {len(sols)} solutions, expected exactly one")
    world = sols[0]
    consts = [constant_name(n) for n in names]
    if len(set(consts)) != len(consts):
        raise ValueError(f"{pid}: names {list(names)} collide as constants {consts}")
    rng = rng or random.Random(0)
    sentences = []
    premises = []
    for i, (name, st) in enumerate(zip(names, statements)):
        sentence = rng.choice(SAYS).format(name=name, content=render_claim(st, names, roles=roles))
        sentence = sentence[0].upper() + sentence[1:]
        sentences.append(sentence)
        premises.append(Premise(id=f"h{i + 1}", text=sentence,
                                formal=premise_formula(consts[i], st, consts)))
    if quiz is None:
        listing = ", ".join(names[:-1]) + f", and {names[-1]}" if len(names) > 2 else " and ".join(names)
        quiz = f"{_prefix(roles)} You meet {len(names)} inhabitants: {listing}. {' '.join(sentences)} {_postfix(roles)}"
    atoms = [f"Knight {c}" for c in consts]
    extra = {"names": list(names), "statements": repr(tuple(statements)),
             "answer_text": answer_text(names, world, roles)}
    if tuple(roles) != ROLES:
        extra["roles"] = {"knight": roles[0], "knave": roles[1]}
    return Problem(
        id=pid, kind="assignment", premises=premises, source=source, context=quiz,
        question=question_for(roles), atoms=atoms,
        assignment={a: v for a, v in zip(atoms, world)}, difficulty=len(names), extra=extra,
    )


def _prefix(roles: Sequence[str]) -> str:
    if tuple(roles) == ROLES:
        return PREFIX
    good, bad = roles
    return (f"A very special island is inhabited only by {good}s and {bad}s. "
            f"{good.capitalize()}s always tell the truth, and {bad}s always lie.")


def _postfix(roles: Sequence[str]) -> str:
    return f"So who is {article(roles[0])} and who is {article(roles[1])}?"


def generate(cfg: KKConfig, count: int, seed: int) -> list[Problem]:
    """`count` distinct puzzles with unique solutions; same (cfg, count, seed) gives the same list."""
    rng = random.Random(seed)
    out: list[Problem] = []
    seen: set[tuple] = set()
    attempts = 0
    while len(out) < count:
        attempts += 1
        if attempts > 20 * count + 100:
            raise ValueError(f"only {len(out)} distinct puzzles found for {cfg}")
        names = rng.sample(NAMES, cfg.people)
        st = sample_statements(rng, cfg)
        if st in seen:
            continue
        seen.add(st)
        out.append(build_problem(problem_id("kk", cfg.people, seed, len(out), cfg, "people"), names, st, rng))
    return out


# ---------------------------------------------------------------- public dataset records
def parse_statements(text: str) -> tuple[Statement, ...]:
    """The hub's `statements` field (a Python-literal nested tuple) via `ast.literal_eval`."""
    try:
        value = pyast.literal_eval(text) if isinstance(text, str) else text
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"field 'statements': not a Python literal: {exc}") from None
    if not isinstance(value, (tuple, list)):
        raise ValueError("field 'statements': expected a tuple of claims")
    return tuple(_check_statement(_as_tuple(s)) for s in value)


def _as_tuple(s: Any) -> Any:
    return tuple(_as_tuple(x) for x in s) if isinstance(s, (list, tuple)) else s


def _check_statement(s: Any) -> Statement:
    if not isinstance(s, tuple) or not s:
        raise ValueError(f"field 'statements': malformed claim {s!r}")
    op = s[0]
    if op in ("telling-truth", "lying"):
        if len(s) != 2 or not isinstance(s[1], int):
            raise ValueError(f"field 'statements': malformed atom {s!r}")
    elif (op == "not" and len(s) == 2) or (op in ("and", "or") and len(s) >= 3) or (
            op in ("->", "<=>") and len(s) == 3):
        for x in s[1:]:
            _check_statement(x)
    else:
        raise ValueError(f"field 'statements': malformed claim {s!r}")
    return s


def hub_record_id(rec: dict[str, Any]) -> str:
    """The id of a `K-and-K/knights-and-knaves` record, from what it says (its people and quiz text): the same
    record read from the hub (`prosfi data kk --hub`), from a local copy (`--file`) or as an eval spec
    (`--data kkhub:FILE`) gets the same id, and two records never share one (the hub's train and test files
    both number their records from 0, so neither position nor `index` identifies a problem)."""
    digest = hashlib.sha256(str(rec["quiz"]).encode("utf-8")).hexdigest()[:10]
    return f"kkhub-{len(rec['names'])}-{digest}"


def problem_from_kk_record(rec: dict[str, Any], pid: str | None = None) -> Problem:
    """Map one `K-and-K/knights-and-knaves` record to a Problem (premises from `statements`); its id is
    `hub_record_id(rec)` unless `pid` is given (reasoning-gym's puzzles are numbered by their draw)."""
    for key in ("quiz", "names", "statements", "solution"):
        if key not in rec:
            raise ValueError(f"K&K record is missing field {key!r}")
    names = list(rec["names"])
    statements = parse_statements(rec["statements"])
    if len(statements) != len(names):
        raise ValueError(f"field 'statements': {len(statements)} claims for {len(names)} names")
    for s in statements:
        for atom in _atoms(s):
            if not 0 <= atom < len(names):
                raise ValueError(f"field 'statements': inhabitant index {atom} out of range")
    pid = pid or hub_record_id(rec)
    terms = rec.get("knight_knave_terms")  # reasoning-gym's metadata; else the quiz's own words
    roles = ((str(terms["knight"]), str(terms["knave"])) if isinstance(terms, dict) and terms.get("knight")
             and terms.get("knave") else roles_in_quiz(str(rec["quiz"])))
    problem = build_problem(pid, names, statements, quiz=rec["quiz"], roles=roles)
    world = [problem.assignment[a] for a in problem.atoms]
    if list(rec["solution"]) != world:
        raise ValueError(f"{pid}: field 'solution' {rec['solution']} disagrees with the statements' "
                         f"unique solution {world}")
    # Keep the public wording of each claim: the premise text is the quiz sentence when we can find it.
    sentences = quiz_sentences(rec["quiz"], len(names), roles)
    if sentences:
        problem.premises = [Premise(p.id, p.formal, sentences[i]) for i, p in enumerate(problem.premises)]
    problem.extra["hub_index"] = rec.get("index")
    return problem


def _atoms(s: Statement):
    if s[0] in ("telling-truth", "lying"):
        yield s[1]
    else:
        for x in s[1:]:
            yield from _atoms(x)


_SENTENCE_BREAK = re.compile(r'(?<=[.!?])\s+(?=[A-Z"])|(?<=[.!?]")\s+(?=[A-Z"])')


def quiz_sentences(quiz: str, n: int, roles: Sequence[str] = ROLES) -> list[str] | None:
    """The n claim sentences of a public quiz, in inhabitant order, or None if they cannot be split."""
    body = quiz.split("inhabitants:", 1)
    if len(body) != 2:
        return None
    rest = body[1]
    # skip the name listing ("Zoey, and Oliver.") and drop the closing question (and a format hint after it)
    rest = rest.split(".", 1)[1] if "." in rest else ""
    for closing in (POSTFIX, _postfix(roles)):
        rest = rest.split(closing, 1)[0] if closing in rest else rest
    rest = rest.strip()
    sentences = [x.strip() for x in _SENTENCE_BREAK.split(rest) if x.strip()]
    return sentences if len(sentences) == n else None


def problem_from_reasoning_gym(entry: dict[str, Any], pid: str) -> Problem:
    """One reasoning-gym `knights_knaves` entry (`question`, `answer`, `metadata`: statements, solution,
    names, knight_knave_terms) as a Problem in the puzzle's own words."""
    md = entry.get("metadata") if isinstance(entry, dict) else None
    if not isinstance(md, dict):
        raise ValueError("reasoning-gym entry has no 'metadata'")
    rec = {"quiz": entry.get("question", ""), "names": md.get("names"), "statements": _as_tuple(md.get("statements")),
           "solution": md.get("solution"), "knight_knave_terms": md.get("knight_knave_terms"),
           "index": md.get("source_index")}
    problem = problem_from_kk_record(rec, pid)
    problem.source = "reasoning_gym_knights_knaves"
    if isinstance(entry.get("answer"), str):
        problem.extra["answer_text"] = entry["answer"]  # "Chloe is a saint, and Sophia is a saint."
    return problem


def load_reasoning_gym(people: int, count: int, seed: int) -> list[Problem]:
    """`count` puzzles of `people` inhabitants from reasoning-gym (`create_dataset("knights_knaves")`)."""
    try:
        import reasoning_gym
    except ImportError as exc:
        raise ValueError("rgkk needs reasoning-gym: pip install 'reasoning-gym>=0.1.25'") from exc
    ds = reasoning_gym.create_dataset("knights_knaves", size=count, seed=seed, n_people=people)
    return [problem_from_reasoning_gym(ds[i], problem_id("rgkk", people, seed, i)) for i in range(count)]


def load_kk_hub(people: int, split: str = "test", limit: int | None = None) -> list[Problem]:
    """Problems from the hub (`K-and-K/knights-and-knaves`); only called on user request."""
    from prosfi.data.hub import load_hub_records

    num = 100 if split == "test" else (200 if people == 2 else 1000)
    data_file = f"{split}/people{people}_num{num}.jsonl"
    records = load_hub_records("K-and-K/knights-and-knaves", data_file)
    if limit is not None:
        records = records[:limit]
    return [problem_from_kk_record(r) for r in records]
