"""Prometheus metrics of one app: a registry per app (no process-global state), text at GET /metrics."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.requests = Counter("prosfi_requests", "HTTP requests by route and status", ["route", "status"],
                                registry=r)
        self.latency = Histogram("prosfi_request_seconds", "request latency by route", ["route"], registry=r,
                                 buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 180))
        self.completions = Counter("prosfi_completions_scored", "completions scored (once each)", ["mode"],
                                   registry=r)
        self.checks = Counter("prosfi_checks", "step checks sent to the verifier", registry=r)
        self.verdicts = Counter("prosfi_verdicts", "step verdicts by status", ["verdict"], registry=r)
        self.masked = Counter("prosfi_masked", "completions answered masked (infrastructure, not the policy)",
                              ["kind"], registry=r)
        self.rejected = Counter("prosfi_rejected", "requests refused before scoring", ["why"], registry=r)
        self.deduplicated = Counter("prosfi_idempotent_replays", "requests answered from the idempotency cache",
                                    registry=r)
        self.idempotency_bytes = Gauge("prosfi_idempotency_bytes", "bytes of answers kept for Idempotency-Key replays",
                                       registry=r)
        self.idempotency_keys = Gauge("prosfi_idempotency_keys", "answers kept for Idempotency-Key replays",
                                      registry=r)
        self.in_flight = Gauge("prosfi_in_flight", "requests being answered (a drain waits for 0)", registry=r)
        self.queue_depth = Gauge("prosfi_queue_depth", "completions waiting to be scored", registry=r)
        self.passes = Counter("prosfi_verifier_passes", "verifier passes (merged requests)", registry=r)
        self.cache_hit_rate = Gauge("prosfi_cache_hit_rate", "verdict-cache hit rate since start", registry=r)
        self.worker_restarts = Gauge("prosfi_worker_restarts", "verifier workers that died or were killed",
                                     registry=r)

    def text(self) -> bytes:
        return generate_latest(self.registry)

    def value(self, name: str, **labels) -> float:
        """A sample's current value (tests, the bench); 0.0 when it was never set."""
        v = self.registry.get_sample_value(name, labels or None)
        return 0.0 if v is None else v


__all__ = ["CONTENT_TYPE", "Metrics"]
