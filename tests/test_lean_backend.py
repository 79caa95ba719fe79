"""The `lean` / `lean_dojo` backends: availability messages, verdict plumbing, and real Lean checks.

Tests without the `lean` marker point the backend's pool at tests/standin_repl.py (not Lean):
they check how REPL outcomes become verdicts and that a batch keeps one verdict per check in
order, never whether a step is valid. Tests marked `lean` run real checks where `lake` exists.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from prosfi.logic.parser import parse
from prosfi.logic.signature import check_signature
from prosfi.verify.backend import Check
from prosfi.verify.lean import LeanBackend, LeanConfig, LeanDojoBackend
from prosfi.verify.lean.config import PROJECT_ENV
from prosfi.verdict import Status

STANDIN = str(Path(__file__).with_name("standin_repl.py").resolve())
NO_LAKE = shutil.which("lake") is None


def _checks(*pairs: tuple[dict[str, str], str]):
    checks = [Check(tuple((k, parse(v)) for k, v in prem.items()), parse(concl)) for prem, concl in pairs]
    signature = check_signature([f for c in checks for _, f in c.premises] + [c.conclusion for c in checks])
    return checks, signature


@pytest.mark.skipif(not NO_LAKE, reason="checks the messages shown where Lean is missing")
def test_missing_lean_is_explained():
    reason = LeanBackend.unavailable()
    assert reason and "lake" in reason and "elan" in reason
    with pytest.raises(RuntimeError, match="'lean' verifier backend cannot run: no `lake` on PATH"):
        LeanBackend()


def test_missing_lean_dojo_is_explained():
    if LeanDojoBackend.unavailable() is None:
        pytest.skip("lean_dojo and Lean are installed here")
    reason = LeanDojoBackend.unavailable()
    assert "lean_dojo" in reason or "lake" in reason
    with pytest.raises(RuntimeError, match="lean_dojo"):
        LeanDojoBackend()


def test_lean_asked_for_by_name_without_lean_is_a_clear_error():
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.verifier import Verifier

    if LeanBackend.unavailable() is None:
        pytest.skip("Lean is installed here")
    for name in ("lean", "lean_dojo"):
        with pytest.raises(ValueError, match=f"backend '{name}' was asked for but cannot run here") as err:
            Verifier(VerifierConfig(backends=("z3", name), workers=0))
        assert f"'{name}?'" in str(err.value)  # says how to make it optional
    with pytest.raises(ValueError) as err:
        Verifier(VerifierConfig(backends=("lean",), workers=0))
    assert PROJECT_ENV in str(err.value) and "lake build" in str(err.value)


def test_auto_and_optional_lean_are_reported_once_and_skipped():
    from prosfi.verify.registry import resolve

    if LeanBackend.unavailable() is None:
        pytest.skip("Lean is installed here")
    with pytest.warns(RuntimeWarning, match="'lean' skipped"):
        specs, skipped = resolve(("auto",))
    assert [s.name for s in specs] == ["z3", "prover9"] and "lake" in skipped["lean"]
    with pytest.warns(RuntimeWarning, match="'lean' skipped"):
        specs, skipped = resolve(("lean?", "z3"))
    assert [s.name for s in specs] == ["z3"] and list(skipped) == ["lean"]


def test_the_verifier_s_lean_settings_decide_availability():
    # A REPL command that exists makes `lean` available wherever lake is missing; one that does not
    # exist is refused with its name, even when the defaults would work.
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.registry import resolve

    ok = VerifierConfig(backends=("lean",), lean=LeanConfig(repl_command=(sys.executable, STANDIN), workers=1))
    assert [s.name for s in resolve(ok.backends, ok)[0]] == ["lean"]
    gone = VerifierConfig(backends=("lean",), lean={"repl_command": "/nowhere/repl --flag", "workers": 1})
    assert gone.lean.repl_command == ("/nowhere/repl", "--flag")  # a dict becomes a LeanConfig
    with pytest.raises(ValueError, match="'/nowhere/repl' not found"):
        resolve(gone.backends, gone)
    with pytest.raises(ValueError, match="VerifierConfig.lean"):
        VerifierConfig(lean="lean_project")


def test_project_is_found_from_setting_env_and_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv(PROJECT_ENV, raising=False)
    checkout = LeanConfig().project_dir()
    assert checkout is not None and (checkout / "lean-toolchain").exists()
    monkeypatch.setenv(PROJECT_ENV, str(tmp_path))
    assert LeanConfig().project_dir() == tmp_path
    assert LeanConfig(project="/elsewhere").project_dir() == Path("/elsewhere")
    monkeypatch.chdir(tmp_path)  # relative paths are made absolute: the REPL runs inside the project
    assert LeanConfig(project="lean_project").project_dir() == tmp_path / "lean_project"


def test_lean_project_pins_matching_versions():
    project = Path(__file__).resolve().parents[1] / "lean_project"
    toolchain = (project / "lean-toolchain").read_text().strip()
    version = toolchain.split(":")[1]
    lakefile = (project / "lakefile.toml").read_text()
    assert lakefile.count(f'rev = "{version}"') == 2, "aesop and repl must be pinned to the toolchain's tag"
    header = (project / "ProsfiHeader.lean").read_text()
    assert "import Aesop" in header and "set_option autoImplicit false" in header


def test_verifier_builds_it_from_a_lean_config_it_carries():
    from types import SimpleNamespace

    config = LeanConfig(repl_command=(sys.executable, STANDIN), workers=1)
    backend = LeanBackend.from_config(SimpleNamespace(lean=config, timeout_ms=1000))
    assert backend.config is config
    backend.close()


def test_config_validation_names_the_field():
    with pytest.raises(ValueError, match="LeanConfig.workers"):
        LeanConfig(workers=0)
    with pytest.raises(ValueError, match="LeanConfig.tactics"):
        LeanConfig(tactics=())
    assert LeanConfig(tactics="simp_all | aesop").tactics == ("simp_all", "aesop")


def test_outcomes_become_verdicts_in_order_with_the_standin():
    # Plumbing only: the stand-in answers from markers (a premise named standin_error makes that
    # check's rendered theorem contain the marker), so valid/unknown here say nothing about logic.
    config = LeanConfig(repl_command=(sys.executable, STANDIN), workers=2, timeout_s=None)
    backend = LeanBackend(config)
    try:
        checks, signature = _checks(
            ({"h1": "A"}, "A"),
            ({"standin_error": "A"}, "A"),
            ({"standin_crash": "A"}, "A"),
            ({"standin_hang": "A"}, "A"),
            ({"h1": "C"}, "C"),
        )
        verdicts = backend.check_group(checks, signature, timeout_ms=1000)
        assert [v.status for v in verdicts] == [Status.VALID, Status.UNKNOWN, Status.UNKNOWN, Status.UNKNOWN,
                                                Status.VALID]
        assert all(v.backend == "lean" for v in verdicts)
        assert "error" in verdicts[1].detail and "crash" in verdicts[2].detail and "timeout" in verdicts[3].detail
        assert backend.check(checks[0], signature, 1000).status is Status.VALID
        other, other_sig = _checks(({"standin_error": "Q a"}, "Q a"))
        mixed = backend.check_many([(signature, checks[0]), (other_sig, other[0]), (signature, checks[4])], 1000)
        assert [v.status for v in mixed] == [Status.VALID, Status.UNKNOWN, Status.VALID]
        assert backend.check_group([], signature, 1000) == []
        assert not any(v.status is Status.INVALID for v in verdicts)  # Lean never claims a countermodel
    finally:
        backend.close()
    assert backend.in_worker is False


# ------------------------------------------------------------------ real Lean (skipped without lake)
@pytest.mark.lean
def test_real_lean_proves_valid_steps_and_not_invalid_ones():
    backend = LeanBackend(LeanConfig(workers=2, timeout_s=120))
    try:
        checks, signature = _checks(
            ({"h1": "∀ x, Kind x → Nice x", "h2": "Kind candy"}, "Nice candy"),
            ({"h1": "Xor' (Knight zoey) (Knave zoey)", "h2": "¬ Knave zoey"}, "Knight zoey"),
            ({"h1": "∀ x, Kind x → Nice x"}, "Nice candy"),
            ({"h1": "∀ x y, Loves x y → Loves y x", "h2": "Loves a b"}, "∃ x, Loves b x"),
            ({"h1": "a = b", "h2": "P a"}, "P b"),
        )
        verdicts = backend.check_group(checks, signature, timeout_ms=60_000)
    finally:
        backend.close()
    assert [v.status for v in verdicts] == [Status.VALID, Status.VALID, Status.UNKNOWN, Status.VALID,
                                            Status.VALID], [v.detail for v in verdicts]


@pytest.mark.lean
def test_real_lean_rejects_sorry_and_keyword_names_do_not_break_rendering():
    from prosfi.logic.ast import Const, Pred
    from prosfi.verify.lean.pool import ReplPool

    with ReplPool(LeanConfig(workers=1)) as pool:
        sorry = pool.run("theorem t : False := by sorry", 120)
        assert sorry.kind == "sorry"
    premises = (("h1", Pred("end", (Const("open"),))),)
    conclusion = Pred("end", (Const("open"),))
    backend = LeanBackend(LeanConfig(workers=1, timeout_s=120))
    try:
        verdict = backend.check(Check(premises, conclusion), check_signature([conclusion]), 60_000)
    finally:
        backend.close()
    assert verdict.status is Status.VALID, verdict.detail


# ------------------------------------------------------------------ LeanDojo worker plumbing
FAKE_LEAN_DOJO = '''
"""A fake `lean_dojo` for the worker's plumbing test (records calls; proves nothing)."""
import json, os
from dataclasses import dataclass

LOG = os.environ["FAKE_DOJO_LOG"]

def _log(**kw):
    with open(LOG, "a") as fh:
        fh.write(json.dumps(kw) + "\\n")

@dataclass(frozen=True)
class CommandState:
    id: int
    message: str | None = None

@dataclass(frozen=True)
class LeanError:
    error: str

class LeanGitRepo:
    @classmethod
    def from_path(cls, path):
        _log(event="from_path", path=str(path))
        return cls()

class Dojo:
    def __init__(self, entry, hard_timeout=None, additional_imports=[]):
        _log(event="dojo", file=str(entry[1]), line=entry[2], imports=list(additional_imports))
    def __enter__(self):
        return self, CommandState(0)
    def __exit__(self, *exc):
        _log(event="exit")
    def run_cmd(self, state, cmd):
        _log(event="run_cmd", state=state.id)
        if "bad_proof" in cmd:
            return LeanError("unsolved goals")
        if "uses_sorry" in cmd:
            return CommandState(state.id + 1, "warning: declaration uses 'sorry'")
        return CommandState(state.id + 1, "")
'''


def test_dojo_worker_speaks_the_repl_protocol_over_lean_dojo(tmp_path):
    from prosfi.verify.lean.repl import ReplDied, ReplProcess

    (tmp_path / "lean_dojo.py").write_text(FAKE_LEAN_DOJO)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "ProsfiHeader.lean").write_text("import Aesop\n\nnamespace Prosfi\nend Prosfi\n")
    log = tmp_path / "calls.jsonl"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "FAKE_DOJO_LOG": str(log)}
    cmd = [sys.executable, "-m", "prosfi.verify.lean.dojo_worker", "--project", str(project)]
    proc = ReplProcess(cmd, project, "import Aesop\nimport ProsfiHeader", start_timeout_s=60, env=env)
    try:
        assert proc.run("theorem ok", 60).ok
        assert proc.run("theorem bad_proof", 60).kind == "error"
        assert proc.run("theorem uses_sorry", 60).kind == "sorry"
    finally:
        proc.kill()
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    dojo = next(c for c in calls if c["event"] == "dojo")
    assert dojo == {"event": "dojo", "file": "ProsfiHeader.lean", "line": 4, "imports": ["Aesop"]}
    assert [c["state"] for c in calls if c["event"] == "run_cmd"] == [0, 0, 0]  # always from the header state

    env.pop("PYTHONPATH")
    with pytest.raises(ReplDied, match="lean_dojo is not installed"):
        ReplProcess(cmd, project, "import Aesop", start_timeout_s=60, env=env)


def _standin_verifier(tmp_path, **overrides):
    """A verifier whose `lean` backend is the stand-in (plumbing only), logging to tmp_path."""
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.verifier import Verifier

    lean = LeanConfig(repl_command=(sys.executable, STANDIN, "--log", str(tmp_path)), workers=2, timeout_s=None)
    return Verifier(VerifierConfig(backends=("lean", "z3"), workers=0, timeout_ms=2000, lean=lean, **overrides))


def _standin_checks(tmp_path) -> int:
    log = tmp_path / "standin.log"
    return sum(line.endswith(" cmd") for line in log.read_text().splitlines()) if log.exists() else 0


def test_verifier_runs_lean_first_in_the_parent_then_z3(tmp_path):
    # Plumbing only: the stand-in "proves" whatever reaches it unless a symbol carries a marker;
    # what it leaves unknown must go on to Z3. The checks are ones the truth table cannot decide
    # (a quantified conclusion; a function symbol), so they reach the cascade in its order (the
    # Herbrand stage, which would prove the first, is off).
    from prosfi.verdict import Entailment

    with _standin_verifier(tmp_path, herbrand=False) as verifier:
        verdicts = verifier.check_many([
            Entailment({"h1": "∀ x, P x → Q x", "h2": "P a"}, "∃ x, Q x"),
            Entailment({"h1": "∀ x, standin_error (f x) → Q x"}, "Q a"),
        ])
        assert verifier.backend_names == ("lean", "z3")
    assert verdicts[0].status is Status.VALID and verdicts[0].backend == "lean"
    assert verdicts[1].status is Status.INVALID and verdicts[1].backend == "z3"
    assert _standin_checks(tmp_path) == 2


def test_truth_table_answers_before_lean_unless_turned_off(tmp_path):
    # The truth table is exact for what it answers, so it pre-empts every backend, Lean first or
    # not; `truth_table=False` hands everything to the cascade in its order. Plumbing only.
    from prosfi.verdict import Entailment

    ground = [Entailment({"h1": "Knight zoey ↔ ¬ Knight oliver", "h2": "Knight oliver"}, "¬ Knight zoey"),
              Entailment({"h1": "standin_error zoey → Knight zoey"}, "Knight zoey")]
    with _standin_verifier(tmp_path / "table") as verifier:
        first = verifier.check_many(ground)
    assert [(v.status, v.backend) for v in first] == [(Status.VALID, "truthtable"), (Status.INVALID, "truthtable")]
    assert _standin_checks(tmp_path / "table") == 0  # Lean never saw them
    (tmp_path / "off").mkdir()
    with _standin_verifier(tmp_path / "off", truth_table=False) as verifier:
        second = verifier.check_many(ground)
    assert [(v.status, v.backend) for v in second] == [(Status.VALID, "lean"), (Status.INVALID, "z3")]
    assert _standin_checks(tmp_path / "off") == 2


class _CountingLeanBackend(LeanBackend):
    """Records how the verifier calls the backend (importable as 'module:Class' by the verifier)."""

    batches: ClassVar[list[tuple[int, int]]] = []  # (problems, checks) per check_many call

    @classmethod
    def from_config(cls, config):
        return cls(cls.lean_config(config))

    def check_many(self, items, timeout_ms):
        type(self).batches.append((len({signature for signature, _ in items}), len(items)))
        return super().check_many(items, timeout_ms)


def test_every_undecided_check_of_a_batch_reaches_the_lean_pool_in_one_call(tmp_path, monkeypatch):
    # Several problems (signatures) in one batch: the REPL pool gets all their checks at once
    # instead of one call per problem. Plumbing only.
    from prosfi.verify.config import VerifierConfig
    from prosfi.verdict import Entailment
    from prosfi.verify.verifier import Verifier

    monkeypatch.setattr(_CountingLeanBackend, "batches", [])
    lean = LeanConfig(repl_command=(sys.executable, STANDIN, "--log", str(tmp_path)), workers=2, timeout_s=None)
    config = VerifierConfig(backends=(f"{__name__}:_CountingLeanBackend",), workers=0, lean=lean,
                            herbrand=False)
    # quantified conclusions: the truth table (universal instances) would prove ground ones first, and
    # the Herbrand stage these
    problems = [Entailment({"h1": f"∀ x, P{k} x → Q{k} x", "h2": f"P{k} c{k}"}, f"∃ x, Q{k} x ∧ P{k} c{k}")
                for k in range(3)]
    with Verifier(config) as verifier:
        verdicts = verifier.check_many([*problems, Entailment({"h1": "∀ x, P0 x"}, "∃ x, P0 x ∧ P0 c9")])
    assert [v.backend for v in verdicts] == ["lean"] * 4
    assert _CountingLeanBackend.batches == [(4, 4)]  # one call for 4 problems, not one per problem
    assert _standin_checks(tmp_path) == 4


def test_unavailable_explains_each_missing_piece(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_lake = bin_dir / "lake"  # only has to exist on PATH for this check; never run
    fake_lake.write_text("#!/bin/sh\nexit 1\n")
    fake_lake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv(PROJECT_ENV, raising=False)
    missing = LeanConfig(project=str(tmp_path / "nowhere")).unavailable()
    assert "no Lean project found" in missing and PROJECT_ENV in missing
    project = tmp_path / "proj"
    project.mkdir()
    (project / "lakefile.toml").write_text("")
    assert "not built: run `cd" in LeanConfig(project=str(project)).unavailable()
    (project / ".lake").mkdir()
    assert LeanConfig(project=str(project)).unavailable() is None
    assert LeanConfig(project=str(project)).command() == ["lake", "exe", "repl"]
    binary = project / ".lake" / "packages" / "REPL" / ".lake" / "build" / "bin" / "repl"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    assert LeanConfig(project=str(project)).command() == ["lake", "env", str(binary)]
