"""Verifier-first step-level beam search (NS-PRM) over prosfi's step format.

The policy first writes its think block once per problem (greedy, up to `<steps>\n[`). Per round, every
active beam samples k candidate next steps (generation stops at the end of one step
object, or at the `]` that closes the step array). Candidates that are not a step object are dropped;
the rest go to the verifier as the last step of their chain (the reward's chain check: proof plus
guards), and only `valid` ones reach the PRM (`mode="both"`). A survivor's beam score is the running
sum of log PRM scores; the top B survivors become the next round's beams (all have the same number of
steps, so the sums compare fairly). A beam whose candidate closes the array is finished; the search
ends when no beam is active or after `max_steps` rounds, and the finished beam with the best mean
log-score per step is answered (one more generation after `</steps>`).

Ablations (`mode`): `prm` scores every parsed candidate with no verifier filter; `verifier` keeps a
random valid candidate per slot (no PRM). Counters are exact: `prm_calls` is the number of steps the
PRM scored, `unpruned_prm_calls` the number an unpruned search would have scored at the same
expansions (every parsed candidate), `verifier_calls` the number of candidates checked.

Cost model (the paper's iso-compute comparison): cost = Σ_expansions (candidates·C_V + valid·C_PRM),
with C_V and C_PRM the mean measured seconds per verifier check and per PRM step score; an unpruned
search scores every parsed candidate (`unpruned_prm_calls`), so at equal cost it affords
`iso_beams_unpruned` = B · cost / (unpruned_prm_calls · C_PRM) beams.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from prosfi.data.problem import Problem
from prosfi.jsonl import loads
from prosfi.prm.inputs import step_text

MODES = ("both", "prm", "verifier")
THINK = "<think>\n</think>\n<steps>\n"


@dataclass
class SearchConfig:
    beams: int = field(default=8, metadata={"help": "B: beams kept per round"})
    candidates: int = field(default=4, metadata={"help": "k: candidate next steps sampled per beam"})
    max_steps: int = field(default=8, metadata={"help": "rounds (steps per chain) at most"})
    mode: str = field(default="both", metadata={"help": "both (verifier filter, then PRM), prm (no verifier "
                                                "filter), verifier (random among valid, no PRM)",
                                                "choices": MODES})
    seed: int = field(default=0, metadata={"help": "seed of sampling and of the verifier-only tie breaks"})
    retries: int = field(default=2, metadata={"help": "parse-validate-retry: a candidate that fails the schema or "
                                              "the verifier is regenerated at most this many times, with the "
                                              "reason in the retry prompt (needs a proposer with `retry`)"})

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode: {self.mode!r} is not one of {', '.join(MODES)}")
        if self.retries < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")
        for name in ("beams", "candidates", "max_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")


@dataclass
class Proposal:
    """One sampled continuation: a step object, the end of the step array, or neither (malformed)."""

    text: str
    step: dict[str, Any] | None = None
    end: bool = False
    reason: str = ""  # why it is not a step (schema), for the retry prompt


class StepProposer(Protocol):
    def propose(self, problem: Problem, prefix: Sequence[dict[str, Any]], k: int) -> list[Proposal]: ...

    # optional: `propose_many(problem, prefixes, k) -> [[Proposal]]`, all beams of a round at once;
    # optional: `retry(problem, prefix, failed: Proposal, reason: str) -> Proposal` (parse-validate-retry)

    def answer(self, problem: Problem, steps: Sequence[dict[str, Any]]) -> str: ...


def read_step(text: str, domain) -> Proposal:
    """Parse the start of a continuation (after `<steps>` or after a step): `[` or `,` then one step
    object, or `]`. `domain` (the problem's) reads the object in its step schema (`Domain.read_step`).
    A malformed proposal keeps its reason."""
    s = _strip_separator(text)
    if s.startswith("]"):
        return Proposal(text, end=True)
    end = object_end(s)
    if not s.startswith("{") or end is None:
        return Proposal(text, reason="not one complete JSON step object")
    obj, why = loads(s[:end])  # model text: never raises (deep nesting, huge integers)
    if why is not None:
        return Proposal(text, reason=f"not JSON: {why}")
    step, reason = domain.read_step(obj)
    return Proposal(text, step=step) if step is not None else Proposal(text, reason=reason)


def _strip_separator(text: str) -> str:
    s = text.lstrip()
    if s[:1] in ("[", ","):
        s = s[1:].lstrip()
    return s


def object_end(s: str) -> int | None:
    """Index just past the JSON object that starts `s` (string-aware brace matching), or None."""
    depth, in_str, escape = 0, False, False
    for i, ch in enumerate(s):
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif depth == 0 and not ch.isspace():
            return None
    return None


def write_completion(steps: Sequence[dict[str, Any]], answer: str, head: str = THINK) -> str:
    """The completion: `head` (the think block and `<steps>`), the step array, the answer."""
    body = ",\n".join(step_text(s) for s in steps)
    return f"{head}[{body}]\n</steps>\n<answer>{answer}</answer>"


class HFProposer:
    """Candidate steps from a causal LM: the training prompt, then the assistant's chain so far."""

    def __init__(self, model, tokenizer, settings=None, temperature: float = 0.7, max_step_tokens: int = 128,
                 max_answer_tokens: int = 64, max_think_tokens: int = 256, seed: int = 0, top_p: float = 0.95) -> None:
        self.model, self.tokenizer, self.settings = model.eval(), tokenizer, settings
        self.top_p = top_p
        self.temperature, self.max_step_tokens, self.max_answer_tokens = temperature, max_step_tokens, max_answer_tokens
        self.device = next(model.parameters()).device
        self.max_think_tokens = max_think_tokens
        self.calls = 0
        self._prompts: dict[str, str] = {}
        self._heads: dict[str, str] = {}
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        from transformers import set_seed

        set_seed(seed)

    def _prompt(self, problem: Problem, note: str = "") -> str:
        key = (problem.id, note)
        if key not in self._prompts:
            from prosfi.eval.generate import build_prompts

            messages = [dict(m) for m in build_prompts([problem], self.settings)[0]]
            if note:
                messages[-1]["content"] += "\n\n" + note
            self._prompts[key] = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                                                    tokenize=False)
        return self._prompts[key]

    def _sample(self, text: str, n: int, max_new: int, done, greedy: bool = False) -> list[str]:
        return self._sample_many([text], n, max_new, done, greedy)[0]

    def _sample_many(self, texts: list[str], n: int, max_new: int, done, greedy: bool = False) -> list[list[str]]:
        """n continuations of each text, in one left-padded `generate` call; a row stops when `done(text)`."""
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        tok = self.tokenizer
        tok.padding_side = "left"
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        start = enc["input_ids"].shape[1]

        class _Stop(StoppingCriteria):
            def __call__(self, input_ids, scores, **kwargs):
                decoded = tok.batch_decode(input_ids[:, start:], skip_special_tokens=True)
                return torch.tensor([done(t) for t in decoded], device=input_ids.device)

        kwargs: dict[str, Any] = {"max_new_tokens": max_new, "num_return_sequences": n,
                                  "pad_token_id": tok.pad_token_id,
                                  "stopping_criteria": StoppingCriteriaList([_Stop()])}
        if self.temperature > 0 and not greedy:
            kwargs.update(do_sample=True, temperature=self.temperature, top_p=self.top_p)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.no_grad():
            out = self.model.generate(**enc, **kwargs)
        self.calls += n * len(texts)
        flat = tok.batch_decode(out[:, start:], skip_special_tokens=True)
        return [flat[i * n:(i + 1) * n] for i in range(len(texts))]

    def head(self, problem: Problem) -> str:
        """The policy's own think block, written once per problem (greedy) up to `<steps>`; the empty
        block when it does not get there within `max_think_tokens`."""
        if problem.id not in self._heads:
            text = self._sample(self._prompt(problem), 1, self.max_think_tokens, lambda t: "<steps>" in t,
                                greedy=True)[0]
            think, sep, rest = text.partition("</think>")
            ok = think.lstrip().startswith("<think>") and sep and rest.strip().startswith("<steps>")
            self._heads[problem.id] = f"{think.strip()}\n</think>\n<steps>\n" if ok else THINK
        return self._heads[problem.id]

    def propose(self, problem: Problem, prefix: Sequence[dict[str, Any]], k: int) -> list[Proposal]:
        return self.propose_many(problem, [prefix], k)[0]

    def propose_many(self, problem: Problem, prefixes: Sequence[Sequence[dict[str, Any]]], k: int,
                     ) -> list[list[Proposal]]:
        """k candidates for each beam of a round, in one batched generation."""
        # the context ends on the head or on the last step's `}`: the policy writes the separator itself (`[{` and
        # `},\n{` are often single tokens, so forcing them would put it off its training distribution)
        from prosfi.domains import domain_for

        head = self._prompt(problem) + self.head(problem)
        texts = [head + ("[" + ",\n".join(step_text(s) for s in prefix) if prefix else "") for prefix in prefixes]
        domain = domain_for(problem)
        return [[read_step(t, domain) for t in group] for group in self._sample_many(texts, k, self.max_step_tokens,
                                                                                      _step_done)]

    def retry(self, problem: Problem, prefix: Sequence[dict[str, Any]], failed: Proposal, reason: str) -> Proposal:
        """One new candidate, the rejection's reason added to the user turn (parse-validate-retry)."""
        from prosfi.domains import domain_for

        note = (f"A candidate for step {len(prefix) + 1} was rejected ({reason[:200]}): "
                f"{failed.text.strip()[:200]}. Write a different, correct next step.")
        text = self._prompt(problem, note) + self.head(problem) + (
            "[" + ",\n".join(step_text(s) for s in prefix) if prefix else "")
        return read_step(self._sample(text, 1, self.max_step_tokens, _step_done)[0], domain_for(problem))

    def answer(self, problem: Problem, steps: Sequence[dict[str, Any]]) -> str:
        head = write_completion(steps, "", self.head(problem)).rsplit("<answer>", 1)[0] + "<answer>"
        text = self._sample(self._prompt(problem) + head, 1, self.max_answer_tokens, lambda t: "</answer>" in t)[0]
        return text.split("</answer>", 1)[0].strip()


def _step_done(text: str) -> bool:
    """Whether a sampled continuation holds one whole step (any domain's schema), the end `]`, or is
    malformed (stop sampling it)."""
    s = _strip_separator(text)
    if s.startswith("]"):
        return True
    if s.startswith("{"):
        return object_end(s) is not None
    return bool(s) and text.strip() not in ("[", ",")  # malformed: stop


@dataclass
class Beam:
    steps: list[dict[str, Any]]
    score: float = 0.0  # sum of log PRM scores (or of log uniform draws, verifier-only)

    @property
    def mean(self) -> float:
        return self.score / len(self.steps) if self.steps else -math.inf


@dataclass
class SearchResult:
    problem_id: str
    completion: str
    steps: list[dict[str, Any]]
    answer: str
    rounds: int = 0
    expansions: int = 0  # (beam, round) pairs expanded
    candidates: int = 0  # sampled continuations
    malformed: int = 0  # neither a step object nor the end of the array: dropped before the verifier
    verifier_calls: int = 0
    valid: int = 0
    prm_calls: int = 0
    unpruned_prm_calls: int = 0
    retries: int = 0  # regenerations after a schema or verifier failure (parse-validate-retry)
    prm_tokens: int = 0  # tokens the PRM read (when it exposes its tokenizer): the FLOPs of the cost model
    verify_s: float = 0.0
    prm_s: float = 0.0
    propose_s: float = 0.0
    total_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["prm_calls_saved"] = self.unpruned_prm_calls - self.prm_calls
        return d


def search(problem: Problem, proposer: StepProposer, prm, verifier, config: SearchConfig | None = None,
           chain_config=None) -> SearchResult:
    """Verifier-first beam search for one problem (see the module docstring)."""
    from prosfi.domains import domain_for
    from prosfi.prm.steps import chain_reasons

    cfg = config or SearchConfig()
    rng = random.Random(f"{cfg.seed}:{problem.id}")
    prompt = domain_for(problem).user_prompt(problem)
    res = SearchResult(problem.id, "", [], "")
    t0 = time.perf_counter()
    active, finished, stalled = [Beam([])], [], []
    for _ in range(cfg.max_steps):
        if not active:
            break
        res.rounds += 1
        cands: list[tuple[Beam, dict[str, Any]]] = []
        t = time.perf_counter()
        if hasattr(proposer, "propose_many"):  # one batched generation for the round
            rounds = proposer.propose_many(problem, [b.steps for b in active], cfg.candidates)
        else:
            rounds = [proposer.propose(problem, b.steps, cfg.candidates) for b in active]
        res.propose_s += time.perf_counter() - t
        pending: list[tuple[Beam, Proposal, int]] = []
        for beam, proposals in zip(active, rounds):
            res.expansions += 1
            res.candidates += len(proposals)
            closed = False
            for p in proposals:
                if p.end:
                    closed = closed or bool(beam.steps)  # an empty chain is not an answer
                else:
                    pending.append((beam, p, 0))
            if closed:
                finished.append(beam)
        can_retry = cfg.retries > 0 and hasattr(proposer, "retry")
        while pending:  # parse - validate - retry: every failure is regenerated at most cfg.retries times
            failed: list[tuple[Beam, Proposal, int, str]] = []
            parsed: list[tuple[Beam, Proposal, int]] = []
            for beam, p, attempt in pending:
                if p.step is None:
                    res.malformed += 1
                    failed.append((beam, p, attempt, p.reason or "not a step object"))
                else:
                    parsed.append((beam, p, attempt))
            res.unpruned_prm_calls += len(parsed)
            if cfg.mode != "prm" and parsed:
                t = time.perf_counter()
                verdicts = chain_reasons([problem] * len(parsed), [b.steps + [p.step] for b, p, _ in parsed],
                                         verifier, chain_config)
                res.verify_s += time.perf_counter() - t
                res.verifier_calls += len(parsed)
                for (b, p, attempt), v in zip(parsed, verdicts):
                    verdict, reason = v[-1] if v else ("error", "no verdict")
                    if verdict == "valid":
                        cands.append((b, p.step))
                        res.valid += 1
                    else:
                        failed.append((b, p, attempt, f"{verdict}: {reason}" if reason else verdict))
            else:
                cands += [(b, p.step) for b, p, _ in parsed]
            pending = []
            if can_retry:
                t = time.perf_counter()
                for b, p, attempt, reason in failed:
                    if attempt < cfg.retries:
                        res.retries += 1
                        res.candidates += 1  # a retry is one more sampled continuation
                        pending.append((b, proposer.retry(problem, b.steps, p, reason), attempt + 1))
                res.propose_s += time.perf_counter() - t
        if cfg.mode == "verifier":
            scores = [rng.random() for _ in cands]
        elif cands:
            t = time.perf_counter()
            items = [(prompt, b.steps, s) for b, s in cands]
            scores = list(prm.score_steps(items))
            res.prm_s += time.perf_counter() - t
            res.prm_calls += len(cands)
            res.prm_tokens += _tokens(prm, items)
        else:
            scores = []
        grown = [Beam(b.steps + [s], b.score + math.log(max(float(x), 1e-12))) for (b, s), x in zip(cands, scores)]
        grown.sort(key=lambda b: -b.score)  # stable: earlier candidates win ties
        parents = {id(b) for b, _ in cands} | {id(b) for b in finished}
        stalled += [b for b in active if id(b) not in parents and b.steps]  # no valid child, not closed
        active = grown[: cfg.beams]
    finished += active  # out of rounds: close what is left
    if not finished:  # every beam stalled (no valid continuation, no `]`): answer the best chain reached
        finished = stalled
    best = max(finished, key=lambda b: b.mean) if finished else Beam([])
    res.steps = best.steps
    t = time.perf_counter()
    res.answer = proposer.answer(problem, best.steps)
    res.propose_s += time.perf_counter() - t
    head = getattr(proposer, "head", None)
    res.completion = write_completion(best.steps, res.answer, head(problem) if callable(head) else THINK)
    res.total_s = time.perf_counter() - t0
    return res


def _tokens(prm, items) -> int:
    """Tokens of the PRM's inputs (0 when the scorer has no tokenizer, e.g. a test stub)."""
    tok = getattr(prm, "tokenizer", None)
    if tok is None:
        return 0
    from prosfi.prm.inputs import pairwise_text

    return sum(len(tok("".join(pairwise_text(*item)), add_special_tokens=False)["input_ids"]) for item in items)


def cost_report(results: Sequence[SearchResult], config: SearchConfig, c_prm: float | None = None,
                prm_params: int | None = None) -> dict[str, Any]:
    """The iso-compute comparison on this run's measured unit costs.

    FLOPs: a PRM forward pass costs about 2·N FLOPs per token (N = `prm_params`), so the PRM side of one
    query is 2·N·(PRM tokens)/problem; the verifier's share is CPU time (C_V), not counted in FLOPs. At equal
    PRM FLOPs an unpruned search affords `iso_beams_unpruned_flops` = B · prm_calls / unpruned_prm_calls beams.

    `c_prm` (seconds per PRM step score) stands in when this run made no PRM call (verifier-only mode,
    or every candidate pruned), e.g. measured by another mode of the same ablation.
    """
    ver_calls = sum(r.verifier_calls for r in results)
    prm_calls = sum(r.prm_calls for r in results)
    unpruned = sum(r.unpruned_prm_calls for r in results)
    c_v = sum(r.verify_s for r in results) / ver_calls if ver_calls else None
    measured = sum(r.prm_s for r in results) / prm_calls if prm_calls else None
    c_prm = measured if measured is not None else c_prm
    expansions = sum(r.expansions for r in results)
    out: dict[str, Any] = {
        "beams": config.beams, "candidates": config.candidates, "mode": config.mode, "problems": len(results),
        "rounds": sum(r.rounds for r in results), "expansions": expansions,
        "candidates_sampled": sum(r.candidates for r in results), "malformed": sum(r.malformed for r in results),
        "verifier_calls": ver_calls, "valid": sum(r.valid for r in results), "prm_calls": prm_calls,
        "unpruned_prm_calls": unpruned, "prm_calls_saved": unpruned - prm_calls,
        "C_V_ms": None if c_v is None else round(1000 * c_v, 4),
        "C_PRM_ms": None if c_prm is None else round(1000 * c_prm, 4),
        "C_PRM_measured_here": measured is not None,
        "retries": sum(r.retries for r in results),
    }
    tokens = sum(r.prm_tokens for r in results)
    if prm_params and tokens and results:
        out["prm_gflops_per_query"] = round(2 * prm_params * tokens / len(results) / 1e9, 6)
        out["prm_gflops_per_query_unpruned"] = round(out["prm_gflops_per_query"] * unpruned / max(prm_calls, 1), 6)
    if unpruned:
        out["iso_beams_unpruned_flops"] = round(config.beams * prm_calls / unpruned, 3)
    if c_prm and unpruned:
        # Σ_expansions (candidates·C_V + valid·C_PRM); an unpruned search scores every parsed candidate
        # (malformed ones reach neither), i.e. unpruned/expansions of them per expansion, per beam slot
        cost = ver_calls * (c_v or 0.0) + prm_calls * c_prm
        per_beam = unpruned / config.beams * c_prm
        out["cost_s"] = round(cost, 6)
        out["cost_unpruned_same_beams_s"] = round(unpruned * c_prm, 6)
        out["iso_beams_unpruned"] = round(cost / per_beam, 3)
    return out


__all__ = [
    "MODES",
    "HFProposer",
    "Proposal",
    "SearchConfig",
    "SearchResult",
    "StepProposer",
    "cost_report",
    "object_end",
    "read_step",
    "search",
    "write_completion",
]
