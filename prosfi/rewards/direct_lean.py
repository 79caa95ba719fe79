"""The direct-Lean completion format (`lean_proof`, reward mode direct_lean): the policy writes a whole Lean
tactic proof for the problem. Its tags, prompt and checker are here, behind `DirectLeanFormat`
(`prosfi.rewards.formats`); no layer above asks for them by name.

Completion layout: `<think>…</think>`, then `<answer>…</answer>` (a letter / True / False /
Uncertain, or the K&K assignment text) and `<lean>…</lean>` (a tactic proof body only). We
render the theorem statement from the problem's AST (premises as hypotheses over a non-empty
domain `U`; the claim is the goal for True, `¬ goal` for False, the conjunction of the gold
literals for an assignment), put the sanitised body under `by`, and run it on the REPL pool.

Levels (RewardConfig): format_failure for a broken layout or a proof the sanitiser refuses,
whatever the answer (injection attempts earn the lowest reward); wrong_answer for a wrong or
unreadable answer; right_unverified for a right answer whose proof is missing or fails;
right_verified when Lean accepts the proof with only the standard axioms (`#print axioms`).

Uncertain: Lean cannot prove non-entailment, so a right "Uncertain" earns at most
right_unverified. We do not substitute Z3 countermodels: that would reward the answer for the
verifier's work, not the policy's, and the baseline measures what the policy can prove. Recipes
that want a clean signal should drop Uncertain problems (as the PRoSFI reference setup does).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prosfi.data.problem import Problem
from prosfi.rewards.audit import AuditLog, audit_step, completion_sha256
from prosfi.rewards.formats import CompletionFormat, FormatColumn
from prosfi.verify.lean.config import LeanConfig
from prosfi.verify.lean.render import (
    DIRECT_THEOREM,
    STANDARD_AXIOMS,
    LeanStatement,
    axioms_used,
    render_command,
    render_statement,
)
from prosfi.verify.lean.sanitize import sanitize_proof

log = logging.getLogger(__name__)

PROBLEM_COLUMN = "problem"
_TAGS = ("<think>", "</think>", "<answer>", "</answer>", "<lean>", "</lean>")
_BLOCK = re.compile(r"<(answer|lean)>(.*?)</\1>", re.DOTALL)
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?```$", re.DOTALL)


# ---------------------------------------------------------------- problem → statement
def problem_statement(problem: Problem, label: str | None = None) -> LeanStatement | None:
    """The theorem the policy must prove, or None when the answer has no Lean claim (Uncertain).

    `label` ("True"/"False"/"Uncertain") overrides the gold label of a true/false/uncertain
    problem; assignment problems always state the gold assignment (the logic domain's
    `answer_claim`). Raises ValueError when the problem's formulas do not parse or type-check
    (a data error, not the policy's)."""
    from prosfi.domains.logic.claims import answer_claim
    from prosfi.logic.parser import parse
    from prosfi.logic.signature import check_signature

    premises = [(p.id, parse(p.formal)) for p in problem.premises]
    claim = answer_claim(problem, label)
    if claim is None:
        return None
    signature = check_signature([f for _, f in premises] + [claim])
    return render_statement(premises, claim, signature, DIRECT_THEOREM)


DIRECT_LEAN_SYSTEM_PROMPT = """\
You solve logic problems and prove your answer in Lean 4. Reply in exactly this form:
<think>
your reasoning in plain language
</think>
<answer>your answer</answer>
<lean>
a tactic proof of the claim your answer makes
</lean>
Write nothing after </lean>. The proof is only the tactic body (no `by`, no `theorem`, no `sorry`);
the hypotheses are named h1, h2, ... as in the problem.
True/False/Uncertain questions: answer with the option letter (an Uncertain answer needs no proof).
Knights and knaves: answer `(1) Name is a knight (2) Name is a knave ...`."""


def direct_lean_prompt(problem: Problem) -> str:
    """What the policy needs to write a proof: our statement with the claim left open (the
    claim depends on its answer; for an assignment it must not leak the gold values)."""
    from prosfi.domains.logic.claims import open_claim

    shown, claim = open_claim(problem, lambda label: problem_statement(problem, label))
    assert shown is not None
    head = shown.text.rsplit(":\n    ", 1)[0]
    return (f"Prove your answer in Lean 4. We state the theorem:\n\n{head.rstrip()} :\n    CLAIM := by\n  <your proof>\n\n"
            f"where CLAIM is {claim}. Write only the tactic proof inside <lean>…</lean>.")


# ---------------------------------------------------------------- completion layout
@dataclass(frozen=True)
class DirectBlocks:
    answer: str | None
    lean: str | None
    reason: str = ""


def extract_direct(text: str) -> DirectBlocks:
    """`<answer>` exactly once and `<lean>` at most once, both after `</think>`, nothing else there."""
    counts = {tag: text.count(tag) for tag in _TAGS}
    if counts["</think>"] != 1 or counts["<think>"] > 1:
        return DirectBlocks(None, None, "need one <think>…</think> block")
    if counts["<answer>"] != 1 or counts["</answer>"] != 1:
        return DirectBlocks(None, None, "need exactly one <answer>…</answer> block")
    if counts["<lean>"] > 1 or counts["<lean>"] != counts["</lean>"]:
        return DirectBlocks(None, None, "at most one <lean>…</lean> block")
    tail = text.split("</think>", 1)[1]
    blocks = {m.group(1): m.group(2) for m in _BLOCK.finditer(tail)}
    if "answer" not in blocks or (counts["<lean>"] and "lean" not in blocks):
        return DirectBlocks(None, None, "<answer>/<lean> must follow </think>")
    if _BLOCK.sub("", tail).strip():
        return DirectBlocks(None, None, "text outside the <answer>/<lean> blocks after </think>")
    lean = blocks.get("lean")
    if lean is not None:
        lean = lean.strip()
        fenced = _FENCE.match(lean)
        lean = fenced.group(1) if fenced else lean
        lean = re.sub(r"^\s*by\b", "", lean, count=1)  # `by` is ours; tolerate the model repeating it
    return DirectBlocks(blocks["answer"].strip(), lean)


# ---------------------------------------------------------------- scoring
# the proof's verdict: valid (Lean accepted it, standard axioms only), invalid (Lean refused it, or it needs a
# non-standard axiom), unknown (Lean could not decide: missing here, timed out, crashed); None where no proof
# was checked (no right answer, no proof written, an Uncertain answer, a proof the sanitiser refused)
VERDICTS = ("valid", "invalid", "unknown")
UNDECIDED = ("timeout", "crash", "start_failed", "repl_error")  # ReplOutcome kinds that decide nothing
LEAN_MISSING = "Lean unavailable"  # the reason's prefix where no Lean could check the proof


@dataclass
class DirectResult:
    """One scored direct-Lean completion: its reward under the levels, and what the checks found."""

    problem_id: str | None
    reward: float | None
    format_ok: bool = False
    answer: str | None = None
    answer_correct: bool = False
    proof: str | None = None  # one of VERDICTS, or None: no proof checked
    reason: str = ""
    lean_ms: float = 0.0
    mode: str = ""

    @property
    def verified(self) -> bool:
        return self.proof == "valid"

    def to_json(self) -> dict:
        """Eval's scored record (`prosfi eval`'s completions.jsonl line, before eval's own columns)."""
        return {"problem_id": self.problem_id, "reward": self.reward, "format_ok": self.format_ok,
                "answer": self.answer, "answer_correct": self.answer_correct, "proof": self.proof,
                "proof_verified": self.verified, "proof_unknown": self.proof == "unknown",
                "reason": self.reason, "lean_ms": round(self.lean_ms, 1), "mode": self.mode}


def score_texts(problems: Sequence[Problem | None], texts: Sequence[str], levels: Any, lean_config: LeanConfig,
                pool: Any = None, missing: str = "") -> list[DirectResult]:
    """Score completion texts against their problems (None: unreadable, reward None) under the reward
    levels `levels` (a RewardConfig). Proofs of right answers run on `pool` (a ReplPool); with no pool every
    such proof is `unknown` ("Lean unavailable: <missing>"), its reward right_unverified, never verified."""
    from prosfi.trace.answer import answer_correct, parse_answer

    lv, mode = levels, getattr(levels, "mode", "")
    results: list[DirectResult] = []
    pending: list[tuple[int, str]] = []  # (result index, REPL command)
    for problem, text in zip(problems, texts):
        pid = problem.id if problem is not None else None
        if problem is None:
            results.append(DirectResult(pid, None, reason="unreadable problem", mode=mode))
            continue
        blocks = extract_direct(text) if len(text) <= getattr(lv, "max_completion_chars", 32_000) else \
            DirectBlocks(None, None, "completion too long")
        if blocks.answer is None:
            results.append(DirectResult(pid, lv.format_failure, reason=blocks.reason, mode=mode))
            continue
        try:  # the gold statement (None for Uncertain); its names also vet the proof
            statement = problem_statement(problem)
            names = statement or problem_statement(problem, "True")
            problem_error = ""
        except ValueError as exc:
            statement = names = None
            problem_error = f"no Lean statement: {exc}"
        proof = sanitize_proof(blocks.lean, names.text if names else "") if blocks.lean else None
        if proof is not None and not proof.ok:  # refused whatever the answer: never worth trying
            results.append(DirectResult(pid, lv.format_failure, reason=f"proof refused: {proof.reason}", mode=mode))
            continue
        parsed = parse_answer(problem, blocks.answer)
        if not answer_correct(problem, parsed):
            results.append(DirectResult(pid, lv.wrong_answer, True, parsed.render() if parsed.ok else blocks.answer,
                                        reason=parsed.reason or "wrong answer", mode=mode))
            continue
        scored = DirectResult(pid, lv.right_unverified, True, parsed.render(), True, mode=mode)
        results.append(scored)
        if problem_error:
            scored.reason = problem_error
            continue
        if statement is None:
            scored.reason = "Uncertain: Lean cannot prove non-entailment (right answer, unverified)"
            continue
        if proof is None:
            scored.reason = "right answer, no <lean> proof"
            continue
        if pool is None:
            scored.proof, scored.reason = "unknown", f"{LEAN_MISSING}: {missing}"[:300]
            continue
        assert proof.body is not None
        cmd = render_command(statement, proof.body, lean_config.max_heartbeats, print_axioms=True)
        pending.append((len(results) - 1, cmd))
    if pending:
        outcomes = pool.run_many([cmd for _, cmd in pending], lean_config.timeout_s or 60.0)
        for (i, _), outcome in zip(pending, outcomes):
            _judge(results[i], outcome, lv)
    return results


def _judge(scored: DirectResult, outcome: Any, levels: Any) -> None:
    """The proof's verdict (and the reward right_verified) from the REPL's outcome."""
    scored.lean_ms = outcome.ms
    if not outcome.ok:
        scored.proof = "unknown" if outcome.kind in UNDECIDED else "invalid"
        scored.reason = f"Lean {outcome.kind}: {outcome.detail}"[:300]
        return
    axioms = axioms_used(outcome.messages)
    extra = None if axioms is None else sorted(set(axioms) - STANDARD_AXIOMS)
    if axioms is None:  # the check ran but said nothing we can read: undecided, not refuted
        scored.proof, scored.reason = "unknown", "no #print axioms report"
    elif extra:
        scored.proof, scored.reason = "invalid", f"proof uses non-standard axioms: {', '.join(extra)}"
    else:
        scored.reward, scored.proof, scored.reason = levels.right_verified, "valid", "proved in Lean"


# ---------------------------------------------------------------- the reward
class DirectLeanReward:
    """TRL reward callable (`__name__` "<mode>_reward", e.g. "direct_lean_reward"; its metrics and completions
    column are named after the mode too); owns a REPL pool until `close()`."""

    def __init__(self, reward_config, lean_config: LeanConfig | None = None, audit_path: str | None = None,
                 pool=None):
        self.levels = reward_config
        self.mode = reward_config.mode
        self.lean_config = lean_config or LeanConfig()
        if pool is None:
            reason = self.lean_config.unavailable()
            if reason:
                raise RuntimeError(f"reward mode {self.mode!r} needs Lean: {reason}")
            from prosfi.verify.lean.pool import ReplPool

            pool = ReplPool(self.lean_config)
        self.pool = pool
        self.audit = AuditLog(audit_path) if audit_path else None  # `{rank}` -> this rank's file
        self.__name__ = f"{self.mode}_reward"

    def __call__(self, prompts=None, completions=None, **kwargs) -> list[float | None]:
        from prosfi.trace.extract import completion_text

        column = kwargs.get(PROBLEM_COLUMN)
        if completions is None or column is None or len(column) != len(completions):
            raise ValueError(f"{self.__name__}: needs completions and a {PROBLEM_COLUMN!r} column of the same length")
        texts: list[str] = []
        for completion in completions:
            try:
                texts.append(completion_text(completion))
            except TypeError:
                texts.append("")
        results = score_texts([_problem(v) for v in column], texts, self.levels, self.lean_config, self.pool)
        self._log(results, texts, kwargs)
        return [r.reward for r in results]

    def _log(self, results: list[DirectResult], texts: list[str], kwargs: dict) -> None:
        log_metric, mode = kwargs.get("log_metric"), self.mode
        if log_metric is not None and results:
            n = len(results)
            log_metric(f"{mode}/verified", sum(r.verified for r in results) / n)
            log_metric(f"{mode}/answer_accuracy", sum(r.answer_correct for r in results) / n)
            log_metric(f"{mode}/format_ok", sum(r.format_ok for r in results) / n)
            checked = [r.lean_ms for r in results if r.lean_ms]
            if checked:
                log_metric(f"{mode}/lean_ms", sum(checked) / len(checked))
        log_extra = kwargs.get("log_extra")
        if log_extra is not None:
            log_extra(mode, [f"{r.reason} → {r.reward}" for r in results])
        if self.audit is None:
            return
        from prosfi.rewards.audit import bounded_text

        now = round(time.time(), 3)
        try:
            self.audit.append([{
                "time": now, "step": audit_step(kwargs.get("trainer_state")), "mode": mode,
                "problem_id": r.problem_id, "completion_sha256": completion_sha256(t),
                "completion": bounded_text(t, self.audit.max_text_chars),
                "reward": r.reward, "format_ok": r.format_ok, "answer": r.answer,
                "answer_correct": r.answer_correct, "lean_verified": r.verified, "proof": r.proof,
                "lean_ms": round(r.lean_ms, 1),
                "reason": r.reason,
            } for r, t in zip(results, texts)])
        except OSError as exc:
            log.warning("%s: audit log write failed: %r", mode, exc)

    def close(self) -> None:
        self.pool.close()
        if self.audit is not None:
            self.audit.close()


def _problem(value: Any) -> Problem | None:
    try:
        if isinstance(value, Problem):
            return value
        return Problem.from_dict(json.loads(value) if isinstance(value, str) else value)
    except (ValueError, TypeError) as exc:
        log.warning("direct_lean: unreadable problem: %s", exc)
        return None


def direct_lean_reward_funcs(reward_config, lean_config: LeanConfig | None = None,
                             audit_path: str | None = None) -> list[Callable]:
    """The TRL reward functions of the direct-Lean baseline (one callable). Raises RuntimeError
    naming what to install or build when Lean is not available."""
    return [DirectLeanReward(reward_config, lean_config, audit_path)]


# ---------------------------------------------------------------- the format
PROOF_COLUMNS = (
    FormatColumn("proof_verified_rate", "proof_verified", "proof verified"),
    FormatColumn("proof_unknown_rate", "proof_unknown", "proof unknown"),
)


class DirectLeanFormat(CompletionFormat):
    """`<think>`, `<answer>`, `<lean>`: the direct-Lean system prompt (unless the recipe gives one) and each
    problem's Lean statement in the user turn; scored by `DirectLeanReward` in training and by `score` (the
    same levels and checks, `score_texts`) in `prosfi eval` and the held-out evaluation. The domains' worked
    examples and gold traces are in the steps format, so it has neither (few_shot: 0, sft: false); it needs a
    Lean toolchain; `prosfi serve` does not score it. The eval callback (eval_data) does not run: it would
    start a second REPL pool beside the reward's during training (held-out evaluation runs before and after
    GRPO)."""

    name = "lean_proof"
    title = "direct-Lean"
    few_shot = False
    gold_traces = False
    served = False
    eval_scored = False
    system_prompt = DIRECT_LEAN_SYSTEM_PROMPT
    eval_columns = PROOF_COLUMNS
    hit_record = "proof_verified"
    hit_means = "right answer with a proof Lean accepts (standard axioms only)"

    def prompt_rows(self, problems, system_prompt=None, few_shot=0, chain=None) -> list[dict]:
        from prosfi.domains.prompts import prompt_rows

        return prompt_rows(problems, system_prompt or self.system_prompt, 0, user_suffix=direct_lean_prompt)

    def reward_funcs(self, reward_config, chain_config=None, verifier=None, audit_path=None, *,
                     asynchronous=False, lean_config=None) -> list[Callable]:
        return direct_lean_reward_funcs(reward_config, lean_config=lean_config, audit_path=audit_path)

    def unavailable(self, lean_config=None) -> str:
        reason = (lean_config or LeanConfig()).unavailable()
        return f"needs Lean: {reason}" if reason else ""

    def score(self, problems, completions, verifier, reward_config, chain_config=None) -> list[DirectResult]:
        """Eval's records: the reward under `reward_config`'s levels, the answer against the gold and the proof's
        verdict from the Lean REPL of the verifier's `lean` settings (`VerifierConfig.lean`; a training run's
        recipe lean_* keys). Where Lean is missing every proof that would be checked is `unknown` (warned once
        per batch), never valid."""
        from prosfi.trace.extract import completion_text

        config = getattr(getattr(verifier, "config", None), "lean", None) or LeanConfig()
        texts = []
        for completion in completions:
            try:
                texts.append(completion_text(completion))
            except TypeError:
                texts.append("")
        missing = config.unavailable()
        if missing:
            log.warning("%s eval: Lean is not available here (%s): proofs are scored unknown, not verified",
                        self.title, missing)
            return score_texts(problems, texts, reward_config, config, None, missing)
        from prosfi.verify.lean.pool import ReplPool

        pool = ReplPool(config)  # processes start on the first check, so a batch with no proof starts none
        try:
            return score_texts(problems, texts, reward_config, config, pool)
        finally:
            pool.close()

    def eval_record(self, scored: dict) -> dict:
        return {}  # the proof's columns are in the scored record already (`DirectResult.to_json`)

    def eval_notes(self, records) -> list[str]:
        missing = [r for r in records if str(r.get("reason") or "").startswith(LEAN_MISSING)]
        if not missing:
            return []
        return [(f"{len(missing)} of {len(records)} completions have a proof Lean could not check here "
                 f"({missing[0]['reason']}): proof unknown, not verified, and no reward hit; run the evaluation "
                 "where Lean is built (docs/lean.md)")]


__all__ = ["PROOF_COLUMNS", "VERDICTS", "DirectBlocks", "DirectLeanFormat", "DirectLeanReward", "DirectResult",
           "direct_lean_reward_funcs", "extract_direct", "problem_statement", "score_texts"]
