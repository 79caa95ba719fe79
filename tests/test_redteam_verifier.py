"""Red-team review of the verifier and the plumbing below the chain guards (second pass).

A false `valid` here would let a policy earn the top reward without a proof, so each attack is
checked against an oracle of our own (a fresh Z3 encoding built from our own tiny AST, with
fresh symbol names, never through prosfi's renderers): names that are words of a backend's input
language (SMT-LIB `and`/`ite`/`U`, Prover9 variables `u`–`z`, the renamers' own `c0`/`P_Q`/`V_x`),
binders that capture constants, cache keys of look-alike checks, one Z3 session across checks
whose symbols change arity or time out, and verdicts after worker crashes.
"""

from __future__ import annotations

import random

import pytest
import z3

from prosfi.logic import canonical, parse
from prosfi.verify.config import VerifierConfig
from prosfi.verify.prover9 import find_prover9
from prosfi.verdict import Entailment, Status
from prosfi.verify.verifier import Verifier

V, I = "valid", "invalid"

# (premises, conclusion, verdict): each name is a word of some backend's input language or of a
# renamer's output, so a rendering that let it through would change what the check means.
ADVERSARIAL = [
    (["and ∧ or"], "and", V), (["or"], "and", I), (["Bool a"], "Bool b", I), (["ite a"], "ite b", I),
    (["distinct a b"], "distinct b a", I), (["Int"], "Real", I), (["U a"], "U b", I), (["P U"], "P V", I),
    (["∀ U, P U"], "P U", V), (["P x"], "P y", I), (["∀ v0, P v0"], "P c0", V), (["P c0"], "P c1", I),
    (["P v0"], "P c0", I), (["P u"], "∀ z, P z", I), (["c0 = c1"], "c1 = c2", I), (["f0 c0 = c1"], "f0 c1 = c0", I),
    (["p0"], "p1", I), (["P_Q"], "Q", I), (["P V_x"], "∀ x, P x", I), (["P C_a"], "P a", I),
    (["P é"], "P x₁", I), (["P a'"], "P a", I), (["P a''"], "P a'", I), (["P α"], "P Ω", I), (["P a_1"], "P a1", I),
    (["∀ a, ∃ a, P a"], "P a", I), (["∀ x, (∃ x, P x) → P x"], "∀ y, P y", I),
    (["∃ x, P x", "∀ x, (∃ x, P x) → P x"], "P b", V),
    ([], "¬ False", V), ([], "False", I), (["True"], "False", I), (["False"], "P a", V), (["Not True"], "Q", V),
    (["Xor' P Q", "P"], "¬ Q", V), (["Xor' P Q"], "P", I), (["P ↔ (Q ↔ R)"], "(P ↔ Q) ↔ R", V),
    (["a = b", "P a"], "P b", V), (["∀ x, x = a"], "b = a", V), ([], "∃ x y, x ≠ y", I), ([], "∀ x y, x = y", I),
    (["∃ x, ∀ y, R x y"], "∀ y, ∃ x, R x y", V), (["∀ y, ∃ x, R x y"], "∃ x, ∀ y, R x y", I),
]


def _entailments(cases):
    return [Entailment({f"h{i}": p for i, p in enumerate(ps)}, c) for ps, c, _ in cases]


def _wrong(cases, verdicts, decided_must_match_only: bool):
    """Cases whose verdict contradicts the expected one (or is missing where it is required)."""
    out = []
    for (ps, c, want), v in zip(cases, verdicts):
        got = v.status.value
        if got == Status.ERROR.value or (got in (V, I) and got != want) or (not decided_must_match_only and got != want):
            out.append((ps, c, want, got, v.detail[:120]))
    return out


@pytest.mark.parametrize("truth_table", [False, True], ids=["z3", "truthtable+z3"])
def test_names_from_a_backends_language_keep_their_meaning_z3(truth_table):
    """Twice through one verifier: the second pass answers from the cache and the reused solver."""
    cfg = VerifierConfig(backends=("z3",), truth_table=truth_table, workers=0, timeout_ms=4000)
    with Verifier(cfg) as v:
        for _ in range(2):
            assert _wrong(ADVERSARIAL, v.check_many(_entailments(ADVERSARIAL)), False) == []


@pytest.mark.skipif(find_prover9()[0] is None, reason="no Prover9 binary")
def test_names_from_a_backends_language_keep_their_meaning_prover9():
    """Prover9 only proves: never `valid` on a non-entailment (u–z names are its variables)."""
    cases = ADVERSARIAL
    cfg = VerifierConfig(backends=("prover9",), truth_table=False, workers=0, timeout_ms=3000, prover9_max_seconds=1)
    with Verifier(cfg) as v:
        verdicts = v.check_many(_entailments(cases))
    assert _wrong(cases, verdicts, True) == []
    proved = sum(v.status is Status.VALID for v in verdicts)
    assert proved >= sum(want == V for *_, want in cases) - 2  # it does prove (one known clausifier crash)


def test_one_z3_session_across_arity_changes_and_timeouts():
    """`R` as a proposition, a binary predicate and back, with checks that time out in between
    (premises with only infinite models): every later check still gets its own verdict."""
    infinite = {"a": "∀ x, ¬ R x x", "b": "∀ x y z, R x y ∧ R y z → R x z", "c": "∀ x, ∃ y, R x y"}
    cases = [(infinite, "False", None), ({"h": "Q a"}, "Q b", I), ({"h": "Q"}, "Q", V), (infinite, "P", None),
             ({"h": "R a b"}, "R b a", I), ({"h": "∀ x, R x x"}, "R a a", V), ({"h": "R"}, "R", V),
             ({}, "R", I), ({"h": "Q b c"}, "Q c b", I), ({"h": "Q a"}, "Q a", V)]
    for workers in (0, 1):
        cfg = VerifierConfig(backends=("z3",), truth_table=False, workers=workers, timeout_ms=500)
        with Verifier(cfg) as v:
            for _ in range(2):
                got = [x.status.value for x in v.check_many([Entailment(p, c) for p, c, _ in cases])]
                assert [g if w is not None else (g != V) for g, (_, _, w) in zip(got, cases)] == \
                       [w if w is not None else True for _, _, w in cases]


# ---------------------------------------------------------------- an oracle of our own
_NAMES = ["a", "b", "c", "x", "y", "U", "and", "v0", "c0"]


def _random_formula(rng: random.Random, depth: int, env: tuple[str, ...]):
    """A tiny AST of our own: ("p", name, args) with P unary and Q nullary, ("eq", s, t), ("not", f),
    (op, f, g), (∀|∃, var, body). Term names resolve by scope, as in Lean."""
    if depth == 0 or rng.random() < 0.25:
        r = rng.random()
        if r < 0.2:
            return ("eq", rng.choice(_NAMES[:3] + list(env)), rng.choice(_NAMES[:3] + list(env)))
        if r < 0.35:
            return ("p", "Q", ())
        return ("p", "P", (rng.choice(_NAMES[:3] + list(env)),))
    k = rng.choice(["not", "and", "or", "imp", "iff", "all", "ex", "all", "ex"])
    if k == "not":
        return ("not", _random_formula(rng, depth - 1, env))
    if k in ("all", "ex"):
        var = rng.choice(_NAMES)  # may capture a constant
        return (k, var, _random_formula(rng, depth - 1, env + (var,)))
    return (k, _random_formula(rng, depth - 1, env), _random_formula(rng, depth - 1, env))


def _text(f) -> str:
    k = f[0]
    if k == "p":
        return f[1] if not f[2] else f"({f[1]} {f[2][0]})"
    if k == "eq":
        return f"({f[1]} = {f[2]})"
    if k == "not":
        return f"(¬ {_text(f[1])})"
    if k in ("all", "ex"):
        return f"({'∀' if k == 'all' else '∃'} {f[1]}, {_text(f[2])})"
    return f"({_text(f[1])} {_OPS[k]} {_text(f[2])})"


_OPS = {"and": "∧", "or": "∨", "imp": "→", "iff": "↔"}


def _z3(f, sort, env: dict, fresh: list):
    k = f[0]

    def term(name):
        return env[name] if name in env else z3.Const(f"k_{name}", sort)

    if k == "p":
        return z3.Bool("k_Q") if not f[2] else z3.Function("k_P", sort, z3.BoolSort())(term(f[2][0]))
    if k == "eq":
        return term(f[1]) == term(f[2])
    if k == "not":
        return z3.Not(_z3(f[1], sort, env, fresh))
    if k in ("all", "ex"):
        fresh[0] += 1
        var = z3.Const(f"bound{fresh[0]}", sort)
        body = _z3(f[2], sort, {**env, f[1]: var}, fresh)
        return z3.ForAll([var], body) if k == "all" else z3.Exists([var], body)
    a, b = _z3(f[1], sort, env, fresh), _z3(f[2], sort, env, fresh)
    return {"and": z3.And, "or": z3.Or, "imp": z3.Implies, "iff": lambda p, q: p == q}[k](a, b)


def _oracle(premises, conclusion) -> str:
    sort = z3.DeclareSort("D")
    solver = z3.Solver()
    solver.set("timeout", 3000)
    fresh = [0]
    for p in premises:
        solver.add(_z3(p, sort, {}, fresh))
    solver.add(z3.Not(_z3(conclusion, sort, {}, fresh)))
    r = solver.check()
    return V if r == z3.unsat else I if r == z3.sat else "unknown"


def _rename(f, rng):
    """An alpha-variant (binders renamed to fresh names) or a capturing variant (a binder renamed
    to a name the body uses free): the first must keep the cache key, the second may not."""
    k = f[0]
    if k in ("all", "ex"):
        new = rng.choice(["w1", "w2", "a", "b", "x"])
        body = _subst(f[2], f[1], new) if new != f[1] else f[2]
        return (k, new, _rename(body, rng))
    if k == "not":
        return ("not", _rename(f[1], rng))
    if k in ("and", "or", "imp", "iff"):
        return (k, _rename(f[1], rng), _rename(f[2], rng))
    return f


def _subst(f, old, new):
    """Rename the free occurrences of `old` to `new` (no capture check: that is the point)."""
    k = f[0]
    if k == "p":
        return ("p", f[1], tuple(new if a == old else a for a in f[2]))
    if k == "eq":
        return ("eq", new if f[1] == old else f[1], new if f[2] == old else f[2])
    if k == "not":
        return ("not", _subst(f[1], old, new))
    if k in ("all", "ex"):
        return f if f[1] == old else (k, f[1], _subst(f[2], old, new))
    return (k, _subst(f[1], old, new), _subst(f[2], old, new))


def test_equal_cache_keys_mean_equivalent_formulas():
    """Binder renamings, some of them capturing a constant: whenever two formulas get the same
    canonical key they are equivalent (checked by the oracle both ways), and a pure alpha-variant
    always gets the same key."""
    rng = random.Random(20261201)
    same = differ = 0
    for _ in range(150):
        f = _random_formula(rng, 3, ())
        g = _rename(f, rng)
        same_key = canonical(parse(_text(f))) == canonical(parse(_text(g)))
        if same_key:
            same += 1
            assert _oracle([f], g) == V and _oracle([g], f) == V, (_text(f), _text(g))
        else:
            differ += 1
    assert same > 20 and differ > 5  # both kinds occurred


def test_look_alike_checks_never_share_a_cached_verdict():
    """One verifier, each check asked twice (the second from the text-key fast path and the
    verdict cache) in batches that mix look-alikes: a binder capturing a constant, premise
    duplicates and order, a proposition and a predicate of the same name."""
    rng = random.Random(7)
    cases = [(["P a"], "∀ a, P a"), (["P a"], "∀ x, P a"), (["∀ x, P x"], "P a"), (["∀ a, P a"], "P a"),
             (["P a", "P a"], "P a"), (["Q", "Q → P a"], "P a"), (["Q → P a", "Q"], "P a"), (["Q → P a"], "P a"),
             (["∃ a, P a"], "P a"), (["∃ x, P x"], "∃ a, P a"), (["∀ x, ∃ a, x = a"], "∃ x, ∀ a, x = a")]
    for _ in range(40):
        prem = [_random_formula(rng, 2, ()) for _ in range(rng.randint(0, 2))]
        concl = _random_formula(rng, 2, ())
        cases.append(([_text(p) for p in prem], _text(concl)))
        cases.append(([_text(_rename(p, rng)) for p in prem], _text(_rename(concl, rng))))
    expected = [_oracle([parse_tiny(p) for p in ps], parse_tiny(c)) for ps, c in cases]
    with Verifier(VerifierConfig(backends=("z3",), workers=0, timeout_ms=3000, truth_table=True)) as v:
        for order in (list(range(len(cases))), list(reversed(range(len(cases))))):
            got = v.check_many([Entailment({f"h{k}": p for k, p in enumerate(cases[i][0])}, cases[i][1])
                                for i in order])
            for i, verdict in zip(order, got):
                if verdict.status.value in (V, I) and expected[i] != "unknown":
                    assert verdict.status.value == expected[i], (cases[i], verdict)


_TINY: dict[str, tuple] = {}


def parse_tiny(text: str):
    """Our own reading of the texts above (the oracle must not use prosfi's parser)."""
    if text in _TINY:
        return _TINY[text]
    tokens = text.replace("(", " ( ").replace(")", " ) ").replace(",", " , ").split()
    pos = [0]

    def peek():
        return tokens[pos[0]] if pos[0] < len(tokens) else None

    def take():
        pos[0] += 1
        return tokens[pos[0] - 1]

    def formula(env):
        if peek() in ("∀", "∃"):
            kind = "all" if take() == "∀" else "ex"
            var = take()
            assert take() == ","
            return (kind, var, formula(env | {var}))
        left = unary(env)
        if peek() in ("∧", "∨", "→", "↔"):
            op = {"∧": "and", "∨": "or", "→": "imp", "↔": "iff"}[take()]
            right = formula(env)  # right-nested, as every case above writes it
            return (op, left, right)
        return left

    def unary(env):
        if peek() == "¬":
            take()
            return ("not", unary(env))
        if peek() == "(":
            take()
            f = formula(env)
            assert take() == ")"
            return f
        head = take()
        if peek() == "=":
            take()
            return ("eq", head, take())
        if head == "P":
            return ("p", "P", (take(),))
        return ("p", head, ())

    out = _TINY[text] = formula(frozenset())
    assert pos[0] == len(tokens), text
    return out


def test_verdicts_after_worker_crashes_belong_to_their_checks():
    """Crashing checks interleaved with real ones in small chunks: the crashed check is
    `unknown`, the rest of its chunk is retried one by one, and every decided verdict is the
    oracle's for that very check."""
    rng = random.Random(11)
    texts, trees = [], []
    for _ in range(24):
        prem = [_random_formula(rng, 2, ()) for _ in range(rng.randint(0, 2))]
        concl = _random_formula(rng, 2, ())
        trees.append((prem, concl))
        texts.append(({f"h{k}": _text(p) for k, p in enumerate(prem)}, _text(concl)))
    for j in (3, 10, 17):
        trees[j] = None
        texts[j] = ({"h": "Q"}, "Crash")
    cfg = VerifierConfig(backends=("prosfi.verify.testing:FaultBackend", "z3"), truth_table=False, workers=1,
                         timeout_ms=2000, batch_size=5)
    with Verifier(cfg) as v:
        got = v.check_many([Entailment(p, c) for p, c in texts])
        assert v.stats()["pool"]["died"] >= 1
    for tree, verdict in zip(trees, got):
        if tree is None:
            assert verdict.status is Status.UNKNOWN
        elif verdict.status.value in (V, I):
            assert verdict.status.value == _oracle(*tree)


def test_a_truth_table_budget_never_flips_a_verdict():
    """Running out of nodes anywhere (the countermodel search, or the universal-instance pass over
    premises the search did not reach) answers nothing; it never turns one verdict into another."""
    from prosfi.logic import check_signature
    from prosfi.verify import truth_table

    rng = random.Random(5)
    decided = cut = 0
    for _ in range(200):
        prem = [parse(_text(_random_formula(rng, rng.randint(1, 3), ()))) for _ in range(rng.randint(0, 3))]
        concl = parse(_text(_random_formula(rng, rng.choice([0, 0, 2]), ())))
        sig = check_signature([*prem, concl])
        full = truth_table.decide(prem, concl, sig, 16, 10**9, 10**6)
        decided += full is not None
        for nodes in (1, 3, 10, 40, 200):
            bounded = truth_table.decide(prem, concl, sig, 16, nodes, 10**6)
            if bounded is None:
                cut += full is not None
            else:
                assert full is not None and bounded.status is full.status, ([str(p) for p in prem], concl)
    assert decided > 50 and cut > 20  # both the decided and the cut-off paths ran
