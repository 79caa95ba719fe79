"""Bounded LRU caches owned by a Verifier: verdicts by canonical key, parses by formula text.

The verdict key is (frozenset of canonical premises, canonical conclusion, backend names):
premise names and order do not matter, bound-variable names do not matter (`canonical` is
alpha-normalised). Only decided answers (valid, invalid, error) are kept: an `unknown` may be a
timeout on a loaded machine and deserves another try.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, Hashable, TypeVar

from prosfi.verdict import Status, Verdict

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

CACHEABLE = frozenset({Status.VALID, Status.INVALID, Status.ERROR})
VerdictKey = tuple[frozenset, str, tuple]


class LRU(Generic[K, V]):
    """A bounded mapping that evicts the least recently used entry; size 0 keeps nothing.

    Safe to share between threads without a lock: every step is one OrderedDict operation
    (atomic under the GIL), and a race can at worst forget an entry or miscount a hit.
    """

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is None:
            self.misses += 1
            return None
        try:
            self._data.move_to_end(key)
        except KeyError:  # evicted by another thread in between: still a valid answer
            pass
        self.hits += 1
        return value

    def put(self, key: K, value: V) -> None:
        if self.maxsize <= 0:
            return
        data = self._data
        data[key] = value
        data.move_to_end(key)
        while len(data) > self.maxsize:
            try:
                data.popitem(last=False)
            except KeyError:  # pragma: no cover - emptied by another thread
                break

    def clear(self) -> None:
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


class FifoCache(Generic[K, V]):
    """A bounded dict that forgets the oldest entry first: cheaper than LRU for lookups that
    are cheap to redo (parses, text -> key)."""

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._data: dict[K, V] = {}
        self.get = self._data.get

    def put(self, key: K, value: V) -> None:
        if self.maxsize <= 0:
            return
        data = self._data
        if len(data) >= self.maxsize and key not in data:
            try:
                del data[next(iter(data))]
            except (StopIteration, KeyError, RuntimeError):  # pragma: no cover - concurrent change
                pass
        data[key] = value

    def clear(self) -> None:
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


class VerdictCache(LRU[VerdictKey, Verdict]):
    """Verdicts of decided checks. `put` ignores `unknown` (timeouts, missing backends)."""

    @staticmethod
    def key(premises: list[str] | tuple[str, ...], conclusion: str, backends: tuple[str, ...]) -> VerdictKey:
        return (frozenset(premises), conclusion, backends)

    def put(self, key: VerdictKey, value: Verdict) -> None:
        if value.status in CACHEABLE:
            super().put(key, value)


__all__ = ["LRU", "FifoCache", "VerdictCache", "CACHEABLE"]
