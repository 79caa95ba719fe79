"""`Verifier`: the one object that answers "do these premises entail this conclusion?".

The hot path of reward computation. In the calling process it parses (cached by text), looks
the check up in the verdict cache (alpha-normalised, premise names ignored), merges duplicate
checks of one batch, checks the signature and runs the exact truth tables (`truth_table`), then ground
Herbrand instances for a proof and small domains for a countermodel (`herbrand`, `truth_table.countermodel`).
What is left goes to the worker pool in chunks that keep one problem's checks together (each worker
keeps one incremental Z3 solver). Backends that run in the parent (Lean: `in_worker = False`)
get the checks still undecided after the stage before them, all in one `check_many` call. The
truth tables run before every backend, whatever the cascade order. Every input gets exactly one
verdict, in input order.

Owns its pool and caches: use it as a context manager or call `close()`; a finalizer tears the
workers down if you forget.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import weakref
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

from prosfi.logic import canonical, check_signature, parse
from prosfi.logic.errors import FormulaError, SignatureError
from prosfi.logic.fastparse import Fallback, parse_ast_symbols
from prosfi.logic.parser import DEFAULT_MAX_DEPTH
from prosfi.logic.signature import Signature, from_symbols, union
from prosfi.verify import herbrand, truth_table
from prosfi.verify.backend import Backend, Check
from prosfi.verify.cache import FifoCache, VerdictCache
from prosfi.verify.cascade import DECISIVE, Cascade, as_backend_answer, merge_unknown
from prosfi.verify.config import VerifierConfig
from prosfi.verify.registry import BackendSpec, resolve
from prosfi.verdict import Entailment, Status, Verdict, error, unknown

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.verify.pool import WorkerPool

log = logging.getLogger(__name__)

# What one check may take beyond its backends' limits on a started verifier: parsing (bounded by
# max_formula_chars), signature and cache work, the truth table's own budget aside, and the pool's
# messaging. `Verifier.response_bound_ms()` adds it up; the hostile-input tests hold every check to it.
RESPONSE_MARGIN_MS = 2000.0


class _Parsed(NamedTuple):
    formula: Any
    canonical: str
    signature: "Signature"


@dataclass(frozen=True)
class _Stage:
    """A maximal run of backends (by index into the resolved specs) that run in the same place."""

    in_worker: bool
    indices: tuple[int, ...]


def _text_key(e: Entailment) -> tuple | None:
    """(premise texts, conclusion text): what two entailments must share to ask the same thing
    verbatim. None when the premises are not a plain dict of hashable values."""
    premises = e.premises
    if type(premises) is not dict:
        return None
    try:
        key = (frozenset(premises.values()), e.conclusion)
        hash(key)  # an unhashable conclusion (a list from bad JSON) takes the checked path: `error`
        return key
    except TypeError:
        return None


def _answered(v: Verdict, t0: float, cached: bool = False) -> Verdict:
    return Verdict(v.status, v.backend, (time.perf_counter() - t0) * 1000.0, v.detail, cached)


def _close_resources(resources: dict) -> None:
    pool = resources.pop("pool", None)
    if pool is not None:
        pool.close()
    for backend in resources.pop("backends", {}).values():
        try:
            backend.close()
        except Exception:  # pragma: no cover - best effort at shutdown
            pass


class Verifier:
    def __init__(self, config: VerifierConfig | None = None, **overrides: Any):
        if config is None:
            config = VerifierConfig(**overrides)
        elif overrides:
            config = replace(config, **overrides)
        self.config = config
        self.specs: list[BackendSpec]
        self.specs, self.skipped = resolve(config.backends, config)
        self.backend_names = tuple(s.name for s in self.specs)
        self._stages = [
            _Stage(kind, tuple(i for i, _ in group))
            for kind, group in itertools.groupby(enumerate(self.specs), key=lambda t: t[1].in_worker)
        ]
        self._worker_specs = [s for s in self.specs if s.in_worker]
        self._hard_limit_ms = config.hard_limit_ms(len(self._worker_specs))
        self.cache = VerdictCache(config.cache_size)
        self._parsed: FifoCache[str, _Parsed | str] = FifoCache(config.parse_cache_size)
        self._text_keys: FifoCache[tuple, tuple] = FifoCache(config.cache_size)
        self._merged: FifoCache[frozenset, Any] = FifoCache(config.parse_cache_size)  # signatures
        self._resources: dict = {"backends": {}}
        self._setup_lock = threading.Lock()
        self._local_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self._counts: Counter = Counter()
        self._ms: Counter = Counter()
        self._closed = False
        self._finalizer = weakref.finalize(self, _close_resources, self._resources)

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        self._closed = True
        self._finalizer()

    def __enter__(self) -> "Verifier":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def pool(self) -> "WorkerPool | None":
        """The worker pool (started on first use); None when workers == 0 or nothing runs in workers."""
        return self._resources.get("pool")

    def response_bound_ms(self) -> float:
        """The documented wall-clock bound on one check (`check([e])`) once the workers have started:
        the worker backends' hard limit, plus each parent backend's own limit (Lean's timeout_s),
        plus the truth table's budget (shared with the Herbrand stage), plus RESPONSE_MARGIN_MS.
        Whatever the input."""
        bound = RESPONSE_MARGIN_MS
        if self._worker_specs:
            bound += self._hard_limit_ms
        if any(not s.in_worker for s in self.specs):
            from prosfi.verify.lean.config import LeanConfig

            lean_s = (self.config.lean or LeanConfig()).timeout_s
            bound += lean_s * 1000.0 if lean_s is not None else self.config.timeout_ms
        if self.config.truth_table:  # the tables, the Herbrand proof and the wider countermodels in one
            bound += self.config.truth_table_max_ms
        return bound

    # ------------------------------------------------------------------ API
    def check(self, entailment: Entailment) -> Verdict:
        return self.check_many([entailment])[0]

    async def acheck_many(self, entailments: Sequence[Entailment]) -> list[Verdict]:
        """`check_many` in a thread, so an event loop keeps running while provers work."""
        import asyncio  # here: importing it costs a one-shot `prosfi check` ~50 ms of CPU

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.check_many, list(entailments))

    def check_many(self, entailments: Sequence[Entailment]) -> list[Verdict]:
        """One verdict per entailment, in input order. Never raises because of an entailment's
        content: malformed input is an `error` verdict, prover trouble is `unknown`."""
        if self._closed:
            raise RuntimeError("Verifier is closed")
        start = time.perf_counter()
        verdicts: list[Verdict | None] = [None] * len(entailments)
        todo: dict[tuple, list[int]] = {}  # cache key -> inputs asking the same question
        work: list[tuple[tuple, "Signature", Check]] = []
        hits = 0
        cache, text_keys = self.cache, self._text_keys
        for i, entailment in enumerate(entailments):
            try:
                t0 = time.perf_counter()
                # fast path: texts seen before map straight to their canonical key
                tkey = _text_key(entailment)
                key = text_keys.get(tkey) if tkey is not None else None
                if key is not None:
                    if key in todo:
                        todo[key].append(i)
                        continue
                    hit = cache.get(key)
                    if hit is not None:
                        hits += 1
                        verdicts[i] = _answered(hit, t0, cached=True)
                        continue
                prepared = self._prepare(entailment)
                if isinstance(prepared, Verdict):
                    verdicts[i] = _answered(prepared, t0)
                    continue
                key, premises = prepared[0], prepared[1]
                if tkey is not None:
                    text_keys.put(tkey, key)
                if key in todo:
                    todo[key].append(i)
                    continue
                hit = cache.get(key)
                if hit is not None:
                    hits += 1
                    verdicts[i] = _answered(hit, t0, cached=True)
                    continue
                checked = self._typecheck(premises, prepared[2])
                if isinstance(checked, Verdict):
                    cache.put(key, checked)
                    verdicts[i] = _answered(checked, t0)
                    continue
                if self.config.truth_table:
                    t1 = time.perf_counter()
                    decided = truth_table.decide([f for _, f in checked[1].premises], checked[1].conclusion,
                                            checked[0], self.config.truth_table_max_atoms,
                                            self.config.truth_table_max_nodes, self.config.truth_table_max_ms)
                    if decided is None and self.config.herbrand:
                        decided = self._settle(checked[0], checked[1], t1)
                    if decided is not None:
                        cache.put(key, decided)
                        verdicts[i] = _answered(decided, t0)
                        continue
                todo[key] = [i]
                work.append((key, checked[0], checked[1]))
            except Exception as exc:  # a bug must cost one verdict, never the batch
                log.exception("verifier: internal error on input %d", i)
                verdicts[i] = unknown(f"internal error: {type(exc).__name__}: {exc}"[:500])

        backend_ms = 0.0
        if work:
            decided = self._decide([(sig, check) for _, sig, check in work])
            backend_ms = sum(v.ms for v in decided)
            for (key, _, _), verdict in zip(work, decided):
                self.cache.put(key, verdict)
                first, *repeats = todo[key]
                verdicts[first] = verdict
                for j in repeats:  # the same question asked again within this batch
                    hits += 1
                    verdicts[j] = Verdict(verdict.status, verdict.backend, 0.0, verdict.detail, True)
        wall = (time.perf_counter() - start) * 1000.0
        with self._stats_lock:
            self._counts["checks"] += len(entailments)
            self._counts["cache_hits"] += hits
            self._counts["batches"] += 1
            for v in verdicts:
                self._counts[f"status_{v.status.value}"] += 1
                if not v.cached and v.backend:
                    self._counts[f"decided_by_{v.backend}"] += 1
            self._ms["wall_ms"] += wall
            self._ms["backend_ms"] += backend_ms
        return verdicts  # type: ignore[return-value]

    def stats(self) -> dict:
        """Counters since construction: checks, cache hits and hit rate, per-status counts, the
        backend that decided, wall-clock ms in check_many, pool restarts and timeouts."""
        with self._stats_lock:
            counts = dict(self._counts)
            ms = dict(self._ms)
        checks = counts.get("checks", 0)
        out: dict[str, Any] = {
            "checks": checks,
            "cache_hits": counts.get("cache_hits", 0),
            "hit_rate": counts.get("cache_hits", 0) / checks if checks else 0.0,
            "batches": counts.get("batches", 0),
            "status": {s.value: counts.get(f"status_{s.value}", 0) for s in Status},
            "decided_by": {k.removeprefix("decided_by_"): v for k, v in counts.items()
                           if k.startswith("decided_by_")},
            "wall_ms": ms.get("wall_ms", 0.0),
            "backend_ms": ms.get("backend_ms", 0.0),
            "cache_size": len(self.cache),
            "backends": list(self.backend_names),
            "skipped_backends": dict(self.skipped),
        }
        pool = self.pool
        if pool is not None:
            out["pool"] = dict(pool.counters)
        return out

    # ------------------------------------------------------------------ preparing
    def _parse(self, text: str) -> _Parsed | str:
        hit = self._parsed.get(text)
        if hit is not None:
            return hit
        try:
            symbols = None
            if type(text) is str and len(text) <= self.config.max_formula_chars:
                try:  # the direct path reads the AST and its symbols at once (parse + check_signature)
                    formula, symbols = parse_ast_symbols(text, DEFAULT_MAX_DEPTH)
                except (Fallback, RecursionError):
                    symbols = None
            if symbols is None:
                formula = parse(text, max_chars=self.config.max_formula_chars)
                signature = check_signature([formula])
            else:
                signature = from_symbols(symbols)
            result: _Parsed | str = _Parsed(formula, canonical(formula), signature)
        except FormulaError as exc:
            result = str(exc) or type(exc).__name__
        except RecursionError:  # the parser bounds depth; this is a last line of defence
            result = "formula is nested too deeply"
        self._parsed.put(text, result)
        return result

    def _prepare(self, e: Entailment):
        """(cache key, [(name, _Parsed)], conclusion _Parsed), or an `error` verdict."""
        premises = e.premises
        if isinstance(premises, Mapping):
            items = list(premises.items())
        elif isinstance(premises, (list, tuple)):
            items = [(f"p{k + 1}", text) for k, text in enumerate(premises)]
        else:
            return error(f"premises must be a mapping name -> formula, not {type(premises).__name__}")
        parsed = []
        for name, text in items:
            if not isinstance(text, str):
                return error(f"premise {name}: a formula must be a string, not {type(text).__name__}")
            p = self._parse(text)
            if isinstance(p, str):
                return error(f"premise {name}: {p}")
            parsed.append((str(name), p))
        if not isinstance(e.conclusion, str):
            return error(f"conclusion: a formula must be a string, not {type(e.conclusion).__name__}")
        concl = self._parse(e.conclusion)
        if isinstance(concl, str):
            return error(f"conclusion: {concl}")
        key = VerdictCache.key([p.canonical for _, p in parsed], concl.canonical, self.backend_names)
        return key, parsed, concl

    def _typecheck(self, premises, concl: _Parsed):
        """(signature, Check) or an `error` verdict naming the clashing symbol."""
        parts = frozenset([p.signature for _, p in premises] + [concl.signature])
        signature = self._merged.get(parts)
        if signature is None:
            try:
                signature = union(parts)
            except SignatureError as exc:
                signature = str(exc)
            self._merged.put(parts, signature)
        if isinstance(signature, str):
            return error(signature)
        return signature, Check(tuple((name, p.formula) for name, p in premises), concl.formula)

    def _settle(self, signature: "Signature", check: Check, since: float) -> Verdict | None:
        """What the truth tables left: a Herbrand proof, else a countermodel on a small domain
        (`herbrand.prove`, `truth_table.countermodel`), in what is left of the truth table's wall-clock
        budget since `since` (so the documented response bound holds); None: the backends decide."""
        c = self.config
        premises = [f for _, f in check.premises]
        left = c.truth_table_max_ms - (time.perf_counter() - since) * 1000.0
        if left <= 0:
            return None
        proved = herbrand.prove(premises, check.conclusion, signature, c.truth_table_max_atoms,
                                c.truth_table_max_nodes, left)
        if proved is not None:
            return proved
        left = c.truth_table_max_ms - (time.perf_counter() - since) * 1000.0
        if left <= 0:
            return None
        return truth_table.countermodel(premises, check.conclusion, signature, c.truth_table_max_atoms,
                                   c.truth_table_max_nodes, left)

    # ------------------------------------------------------------------ deciding
    def _decide(self, items: list[tuple["Signature", Check]]) -> list[Verdict]:
        if not self.specs:
            why = "; ".join(f"{k}: {v}" for k, v in self.skipped.items())
            return [unknown(f"no verifier backend available ({why})") for _ in items]
        final: list[Verdict | None] = [None] * len(items)
        details: list[list[str]] = [[] for _ in items]
        spent = [0.0] * len(items)
        undecided = list(range(len(items)))
        for stage in self._stages:
            if not undecided:
                break
            batch = [items[i] for i in undecided]
            if stage.in_worker:
                answers = self._run_in_workers(stage, batch)
            else:
                answers = self._run_in_parent(stage, batch)
            for i, v in zip(undecided, answers):
                spent[i] += v.ms
                if v.status in DECISIVE:
                    final[i] = replace(v, ms=spent[i])
                else:
                    details[i].append(v.detail)
            undecided = [i for i in undecided if final[i] is None]
        for i in undecided:
            final[i] = merge_unknown(details[i], spent[i])
        return final  # type: ignore[return-value]

    def _chunks(self, batch: list[tuple["Signature", Check]]) -> list[list[int]]:
        """Indices of `batch` cut into contiguous chunks, one problem's checks next to each other
        (sorted by vocabulary) so a worker renders each premise once, and enough chunks to keep
        every worker busy."""
        order = sorted(range(len(batch)), key=lambda i: batch[i][0].key)
        workers = max(1, self.config.workers)
        size = max(1, min(self.config.batch_size, -(-len(batch) // workers)))
        return [order[k:k + size] for k in range(0, len(order), size)]

    def _run_in_workers(self, stage: _Stage, batch: list[tuple["Signature", Check]]) -> list[Verdict]:
        positions = [self._worker_specs.index(self.specs[i]) for i in stage.indices]
        out: list[Verdict | None] = [None] * len(batch)
        if self.config.workers == 0:
            cascade = self._local_cascade()
            with self._local_lock:  # a Z3 context must not be used by two threads at once
                sessions: dict = {}
                for i, (sig, check) in enumerate(batch):
                    run = sessions.get(sig)
                    if run is None:
                        run = sessions[sig] = cascade.session(sig, self.config.timeout_ms, positions)
                    out[i] = run(check)
            return out  # type: ignore[return-value]
        chunks = self._chunks(batch)
        pool = self._ensure_pool()
        results = pool.run([[batch[i] for i in idxs] for idxs in chunks], self.config.timeout_ms, positions)
        for idxs, answers in zip(chunks, results):
            for i, v in zip(idxs, answers):
                out[i] = v
        return out  # type: ignore[return-value]

    def _run_in_parent(self, stage: _Stage, batch: list[tuple["Signature", Check]]) -> list[Verdict]:
        """Backends that own their processes (Lean) get every check of the batch still undecided
        in one `check_many` call, so their pool works on many problems at once."""
        out: list[Verdict | None] = [None] * len(batch)
        details: list[list[str]] = [[] for _ in batch]
        remaining = list(range(len(batch)))
        for index in stage.indices:
            if not remaining:
                break
            answers = self._ask_parent_backend(index, [batch[i] for i in remaining])
            for i, v in zip(remaining, answers):
                if v.status in DECISIVE:
                    out[i] = v
                else:
                    details[i].append(v.detail)
            remaining = [i for i in remaining if out[i] is None]
        for i in remaining:
            out[i] = merge_unknown(details[i], 0.0)
        return out  # type: ignore[return-value]

    def _ask_parent_backend(self, index: int, items: list[tuple["Signature", Check]]) -> list[Verdict]:
        """The backend's answers (its `error` reported as `unknown`); if it cannot be built or
        fails, `unknown` for each of its checks, never a crash."""
        name = self.specs[index].name
        try:
            backend = self._parent_backend(index)
            name = backend.name
            answers = list(backend.check_many(items, self.config.timeout_ms))
            if len(answers) != len(items) or any(not isinstance(v, Verdict) for v in answers):
                raise RuntimeError(f"returned {len(answers)} verdicts for {len(items)} checks")
            return [as_backend_answer(backend, v) for v in answers]
        except Exception as exc:  # a backend failure is `unknown` for its checks, never a crash
            why = f"{name}: {type(exc).__name__}: {exc}"[:500]
            return [unknown(why, name) for _ in items]

    # ------------------------------------------------------------------ resources
    def _parent_backend(self, index: int) -> Backend:
        backends = self._resources["backends"]
        if index not in backends:
            with self._setup_lock:
                if index not in backends:
                    backends[index] = self.specs[index].cls.from_config(self.config)
        return backends[index]

    def _local_cascade(self) -> Cascade:
        with self._setup_lock:
            cascade = self._resources.get("local")
            if cascade is None:
                cascade = Cascade([s.cls.from_config(self.config) for s in self._worker_specs])
                self._resources["local"] = cascade
                self._resources["backends"]["local"] = cascade
            return cascade

    def _ensure_pool(self) -> "WorkerPool":
        with self._setup_lock:
            pool = self._resources.get("pool")
            if pool is None:
                from prosfi.verify.pool import WorkerPool

                pool = WorkerPool([s.path for s in self._worker_specs], self.config,
                                  self.config.workers, self._hard_limit_ms, spare=self.config.spare_workers)
                self._resources["pool"] = pool
            return pool


__all__ = ["Verifier", "VerifierConfig"]
