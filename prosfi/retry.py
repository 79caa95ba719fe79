"""One retry policy for prosfi's HTTP callers (the eval endpoint client, `prosfi.serve.client`): how many
tries, and how long to wait before each retry. Which answers deserve a retry stays with each caller (an
OpenAI-compatible server and `prosfi serve` fail differently); the waiting is the same everywhere.

    policy = Backoff(retries=5, first_s=1.0, max_s=60.0)
    for attempt, wait in policy.attempts():   # (0, 0.0), (1, ~first_s), (2, ~2 * first_s), ...
        time.sleep(wait)                     # or `await asyncio.sleep(wait)`
        ...                                  # `break` or `return` on success

Standard library only, so the standalone serve client can use it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    """Exponential back-off with jitter: retry k (1-based) waits first_s * 2**(k-1), capped at max_s, times a
    random factor in [0.5, 1) so that clients which failed together do not retry together, and never longer
    than max_s."""

    retries: int = 5
    first_s: float = 1.0
    max_s: float = 60.0

    def delay(self, retry: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before retry `retry` (1 = the first retry)."""
        return min(self.max_s, self.first_s * 2 ** (retry - 1)) * (0.5 + rand() / 2)

    def attempts(self) -> Iterator[tuple[int, float]]:
        """(attempt, seconds to wait before it) for the first try and each retry: 1 + retries in all."""
        for attempt in range(max(0, self.retries) + 1):
            yield attempt, (self.delay(attempt) if attempt else 0.0)


__all__ = ["Backoff"]
