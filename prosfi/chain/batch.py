"""Send the checks of many chains to the verifier together: deduplicated, in two rounds, with
identical chains (a GRPO group repeats completions) worked out once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from prosfi.chain.check import ChainCheck
from prosfi.chain.result import ChainResult
from prosfi.verdict import Entailment, Status, Verdict

log = logging.getLogger(__name__)


class ChainBatch:
    """Many `ChainCheck`s whose checks go to the verifier together, deduplicated, in two rounds.

    Drive it with `check(verifier)` (sync) or `await acheck(verifier)`; or by hand: `requests()`
    yields lists of entailments and takes their verdicts back (`send`).
    """

    def __init__(self, checks: Sequence[ChainCheck]) -> None:
        self.checks = list(checks)
        self.verify_ms = 0.0

    def requests(self):
        failed: dict[int, str] = {}
        # a GRPO group repeats completions: an identical check (same problem, steps, claim and
        # config) is worked out once and its result shared
        owner: list[int] = []
        first: dict[tuple, int] = {}
        for i, c in enumerate(self.checks):
            try:
                owner.append(first.setdefault(c.key(), i))
            except TypeError:  # unhashable parts: check it on its own
                owner.append(i)
        mine = [c if owner[i] == i else None for i, c in enumerate(self.checks)]
        wanted = [self._safe(failed, i, c.round1) if c else [] for i, c in enumerate(mine)]
        got = yield from self._ask(wanted)
        wanted = [self._safe(failed, i, c.round2, v) if c else [] for i, (c, v) in enumerate(zip(mine, got))]
        got = yield from self._ask(wanted)
        results = [self._safe(failed, i, c.finish, v) if c else None for i, (c, v) in enumerate(zip(mine, got))]
        return [ChainResult((), False, False, failed[owner[i]], failed=True) if owner[i] in failed
                else results[owner[i]] for i in range(len(self.checks))]

    @staticmethod
    def _safe(failed: dict[int, str], i: int, fn, *args):
        """Run one chain's part; an exception fails that chain only (with a reason and a warning)."""
        if i in failed:
            return []
        try:
            return fn(*args)
        except Exception as exc:
            log.warning("chain check failed: %r", exc, exc_info=True)
            failed[i] = f"internal error while checking the chain: {exc!r}"[:300]
            return []

    @staticmethod
    def _ask(wanted: list[list[Entailment]]):
        """Send the distinct entailments once; hand each chain its verdicts in order."""
        unique: dict[tuple, int] = {}
        batch: list[Entailment] = []
        slots: list[list[int]] = []
        for entailments in wanted:
            row = []
            for e in entailments:
                key = (tuple(e.premises.values()), e.conclusion)
                if key not in unique:
                    unique[key] = len(batch)
                    batch.append(e)
                row.append(unique[key])
            slots.append(row)
        verdicts = (yield batch) if batch else []
        return [[verdicts[k] for k in row] for row in slots]

    def check(self, verifier) -> list[ChainResult]:
        gen = self.requests()
        try:
            batch = next(gen)
            while True:
                batch = gen.send(self._timed(verifier.check_many, batch))
        except StopIteration as stop:
            return stop.value

    async def acheck(self, verifier) -> list[ChainResult]:
        gen = self.requests()
        try:
            batch = next(gen)
            while True:
                t0 = time.perf_counter()
                try:
                    verdicts = _complete(batch, await verifier.acheck_many(batch))
                except Exception as exc:  # noqa: BLE001 - the trainer must not crash on a batch
                    verdicts = _failed(batch, exc)
                self.verify_ms += (time.perf_counter() - t0) * 1000
                batch = gen.send(verdicts)
        except StopIteration as stop:
            return stop.value

    def _timed(self, check_many, batch):
        t0 = time.perf_counter()
        try:
            verdicts = _complete(batch, check_many(batch))
        except Exception as exc:  # noqa: BLE001 - the trainer must not crash on a batch
            verdicts = _failed(batch, exc)
        self.verify_ms += (time.perf_counter() - t0) * 1000
        return verdicts


def _failed(batch: Sequence[Entailment], exc: Exception) -> list[Verdict]:
    log.warning("verifier failed on a batch of %d checks: %r; scoring them unknown", len(batch), exc)
    return [Verdict(Status.UNKNOWN, None, 0.0, f"verifier failed: {exc!r}"[:200])] * len(batch)


def _complete(batch: Sequence[Entailment], verdicts: Sequence[Verdict]) -> list[Verdict]:
    """Guard the one-verdict-per-check contract: a short answer reads as unknown for the rest."""
    verdicts = list(verdicts)
    if len(verdicts) < len(batch):
        verdicts += [Verdict(Status.UNKNOWN, None, 0.0, "verifier returned no verdict")] * (len(batch) - len(verdicts))
    return verdicts[: len(batch)]


__all__ = ["ChainBatch"]
