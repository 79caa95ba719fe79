"""Service settings: one picklable dataclass per concern, so a Ray replica rebuilds the same app from them."""

from __future__ import annotations

from dataclasses import dataclass, field

from prosfi.verify.config import VerifierConfig


@dataclass
class ServeConfig:
    host: str = field(default="127.0.0.1", metadata={"help": "address to bind; loopback unless you say otherwise"})
    port: int = field(default=8000, metadata={"help": "TCP port (0: any free port)"})
    token: str | None = field(
        default=None, metadata={"help": "require `Authorization: Bearer TOKEN` on every route but /health"})
    max_body_bytes: int = field(default=32 << 20, metadata={"help": "larger request bodies get 413"})
    max_batch: int = field(default=8192, metadata={"help": "completions (or check lines) per request; more: 413"})
    max_json_depth: int = field(default=32, metadata={"help": "JSON nested deeper than this gets 400"})
    max_queue: int = field(
        default=65536, metadata={"help": "completions waiting to be scored; a request beyond it gets 429"})
    queue_timeout_s: float = field(
        default=600.0,
        metadata={"help": "seconds: a request not answered this long after it arrived is answered masked "
                  "(failure_kind queue_timeout), queued or already being scored: it bounds every request's latency; "
                  "per-check time limits start only when a check starts"})
    passes: int = field(
        default=2, metadata={"help": "verifier passes running at once (a small request does not wait for a "
                             "large or hard one to finish: the passes share the worker pool job by job)"})
    spare_workers: int = field(
        default=1, metadata={"help": "verifier workers started beyond --workers while every worker is busy "
                             "for other passes, so an easy request does not wait for a hard job"})
    batch_window_ms: float = field(
        default=2.0, metadata={"help": "how long the scorer waits to merge concurrent requests into one pass"})
    max_pass: int = field(default=2048, metadata={"help": "completions per verifier pass (merged requests)"})
    idempotency_size: int = field(
        default=4096, metadata={"help": "answers remembered by Idempotency-Key (a retried request is not rescored)"})
    idempotency_bytes: int = field(
        default=256 << 20,
        metadata={"help": "bytes of answers remembered by Idempotency-Key, oldest forgotten first; an answer "
                  "larger than this is not remembered"})

    def __post_init__(self) -> None:
        if self.idempotency_bytes < 0 or self.idempotency_size < 0:
            raise ValueError("ServeConfig.idempotency_bytes and idempotency_size must be >= 0")
        if self.spare_workers < 0:
            raise ValueError(f"ServeConfig.spare_workers must be >= 0, got {self.spare_workers}")
        for name in ("max_body_bytes", "max_batch", "max_json_depth", "max_queue", "max_pass", "passes"):
            if getattr(self, name) < 1:
                raise ValueError(f"ServeConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.queue_timeout_s <= 0:
            raise ValueError(f"ServeConfig.queue_timeout_s must be > 0, got {self.queue_timeout_s}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"ServeConfig.port must be in 0..65535, got {self.port}")


@dataclass
class ServeSettings:
    """Everything a replica needs to build the app: service limits, the verifier, preloaded problems."""

    serve: ServeConfig = field(default_factory=ServeConfig)
    verifier: VerifierConfig = field(default_factory=VerifierConfig)
    data: tuple[str, ...] = ()  # --data specs (prosfi.eval.sources), problems named by id in requests
    count: int = 100
    limit: int | None = None
    data_seed: int | None = None
    reward: str = "prosfi"  # the default reward mode of a request that names none


__all__ = ["ServeConfig", "ServeSettings"]
