"""The FastAPI application: one `create_app(settings)` for uvicorn and for every Ray Serve replica.

Routes: GET /health, GET /metrics, POST /check, /score, /openrlhf, /verify. Every body is read by
`_body`: at most `max_body_bytes` (413), JSON nested at most `max_json_depth` (400), the route's pydantic
model (422 naming the field), at most `max_batch` items (413). Errors are JSON `{"error", "field"}` and
never stop the server. With a token every route but /health needs `Authorization: Bearer TOKEN` (401).
An `Idempotency-Key` header makes a retried POST return the first answer instead of scoring again.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse as _StarletteJSON
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from prosfi.rewards.config import REWARD_MODES, RewardConfig
from prosfi.rewards.formats import format_for
from prosfi.serve import contracts
from prosfi.serve.config import ServeSettings
from prosfi.serve.engine import Engine, Outcome, Overloaded, chain_config
from prosfi.serve.metrics import CONTENT_TYPE, Metrics
from prosfi.serve.schemas import CheckRequest, OpenRLHFRequest, ScoreRequest, VerifyRequest

log = logging.getLogger(__name__)


class JSONResponse(_StarletteJSON):
    """JSON in UTF-8; text that UTF-8 cannot carry (a lone surrogate such as `\\ud800` sent as a JSON escape in
    an id or a completion) is sent back the way it came, as a `\\uXXXX` escape, instead of failing the reply."""

    def render(self, content: Any) -> bytes:
        try:
            return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


class HTTPFailure(Exception):
    def __init__(self, status: int, error: str, field: str | None = None) -> None:
        super().__init__(error)
        self.status, self.error, self.field = status, error, field


def _depth(value: Any, limit: int) -> bool:
    """True when `value` nests no deeper than `limit` (iterative: a hostile body cannot blow the stack)."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            if d > limit:
                return False
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return True


def create_app(settings: ServeSettings | None = None, engine: Engine | None = None,
               shared: tuple[str, str] | None = None) -> FastAPI:
    """The app. `shared` (actor name, namespace; Ray Serve replicas) puts the idempotency store and the
    metrics in that `prosfi.serve.shared.SharedState` actor, common to every replica."""
    settings = settings or ServeSettings()
    cfg = settings.serve
    metrics = engine.metrics if engine is not None else Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        own = app.state.engine is None
        if own:
            app.state.engine = Engine(settings, metrics=metrics)
        if app.state.engine.verifier is None:
            await app.state.engine.start()
        pusher = None
        if shared is not None:
            pusher = await _share(app, shared)
        try:
            yield
        finally:
            if pusher is not None:
                pusher.cancel()
            if own:
                await app.state.engine.close()

    app = FastAPI(title="prosfi serve", version="1", lifespan=lifespan, default_response_class=JSONResponse,
                  description="Formally verified process rewards over HTTP (docs/serving.md).")
    app.state.engine = engine
    app.state.metrics = metrics
    app.state.settings = settings
    app.state.shared = None

    def _engine() -> Engine:
        return app.state.engine

    app.add_middleware(_Guard, token=cfg.token, max_body=cfg.max_body_bytes, metrics=metrics)

    @app.exception_handler(HTTPFailure)
    async def _failure(request: Request, exc: HTTPFailure):
        return _error(exc)

    @app.exception_handler(StarletteHTTPException)  # 404 unknown route, 405 wrong method: the same JSON
    async def _http_failure(request: Request, exc: StarletteHTTPException):
        return _error(HTTPFailure(exc.status_code, str(exc.detail)))

    async def _body(request: Request, model: type[BaseModel]) -> Any:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cfg.max_body_bytes:
                raise HTTPFailure(413, f"request body over max_body_bytes ({cfg.max_body_bytes})")
            chunks.append(chunk)
        raw = b"".join(chunks)
        try:
            data = json.loads(raw)
        except RecursionError:  # the C decoder bounds its own recursion: a hostile body costs one 400
            raise HTTPFailure(400, f"JSON nested deeper than max_json_depth ({cfg.max_json_depth})") from None
        except ValueError as exc:
            raise HTTPFailure(400, f"body is not JSON: {exc}"[:300]) from None
        if not _depth(data, cfg.max_json_depth):
            raise HTTPFailure(400, f"JSON nested deeper than max_json_depth ({cfg.max_json_depth})")
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(x) for x in first.get("loc", ())) or None
            raise HTTPFailure(422, f"{loc or 'body'}: {first.get('msg')}", loc) from None

    def _size(n: int, name: str) -> None:
        if n > cfg.max_batch:
            metrics.rejected.labels("batch_too_large").inc()
            raise HTTPFailure(413, f"{name}: {n} items, over max_batch ({cfg.max_batch})", name)

    def _reward(mode: str | None) -> RewardConfig:
        """The request's reward levels in a mode the service scores: the steps format's (a format it does not
        serve, such as direct_lean's Lean proofs, is a 422 naming the modes it does)."""
        try:
            reward = RewardConfig(mode=mode or settings.reward)
        except ValueError as exc:
            raise HTTPFailure(422, f"reward: {exc}", "reward") from None
        if not format_for(reward.mode).served:
            raise HTTPFailure(422, f"reward: {reward.mode} is not served; use {', '.join(REWARD_MODES[:-1])} or "
                              f"{REWARD_MODES[-1]}", "reward")
        return reward

    async def _scored(request: Request, work) -> Response:
        """The answer of `work()` as JSON bytes, once per Idempotency-Key (the bytes are what is remembered)."""
        key = request.headers.get("idempotency-key")

        async def make() -> bytes:
            data = await work()
            return await asyncio.to_thread(JSONResponse.render, None, data)  # large answers: off the loop

        try:  # keys are per route: the same key on /score and /verify names two requests
            body = await _engine().once(f"{request.url.path}:{key}" if key else None, make)
        except Overloaded as exc:
            raise HTTPFailure(429, f"overloaded: {exc}; retry later") from None
        return Response(body, media_type="application/json")

    @app.get("/health")
    async def health() -> dict:
        eng = _engine()
        return {"status": "ok" if eng is not None and eng.verifier is not None else "starting",
                "problems": len(eng.problems) if eng is not None else 0,
                "backends": list(eng.verifier.backend_names) if eng is not None and eng.verifier else []}

    @app.get("/metrics")
    async def metrics_text() -> Response:
        if app.state.shared is None:
            return Response(metrics.text(), media_type=CONTENT_TYPE)
        from prosfi.serve.shared import merge_metrics

        actor, replica = app.state.shared
        await actor.push_metrics.remote(replica, metrics.text().decode())
        texts = await actor.all_metrics.remote(METRICS_MAX_AGE_S)
        return Response(merge_metrics(texts), media_type=CONTENT_TYPE)

    @app.post("/check")
    async def check(request: Request) -> Response:
        body: CheckRequest = await _body(request, CheckRequest)
        _size(len(body.checks), "checks")
        lines = [x if isinstance(x, str) else json.dumps(x, ensure_ascii=False) for x in body.checks]
        return JSONResponse({"results": await _engine().check(lines)})

    @app.post("/score")
    async def score(request: Request) -> Response:
        body: ScoreRequest = await _body(request, ScoreRequest)
        _size(len(body.completions), "completions")
        reward, chain = _reward(body.reward), _chain(body.chain.model_dump(exclude_unset=True))
        extra = []
        for i, p in enumerate(body.problems):
            try:
                extra.append(contracts.parse_problem(p, {}))
            except ValueError as exc:
                raise HTTPFailure(422, f"problems.{i}: {exc}", f"problems.{i}") from None
        eng = _engine()
        problems = eng.problem_map(extra)

        async def work():
            outcomes = await eng.score(eng.entries(body.completions, problems, reward.mode), problems, reward, chain)
            return {"results": [o.to_json() for o in outcomes],
                    "masked": sum(o.masked is not None for o in outcomes)}

        return await _scored(request, work)

    @app.post("/openrlhf")
    async def openrlhf(request: Request) -> Response:
        body: OpenRLHFRequest = await _body(request, OpenRLHFRequest)
        _size(len(body.query), "query")
        if len(body.labels) != len(body.query):
            raise HTTPFailure(422, f"labels: {len(body.labels)} labels for {len(body.query)} queries", "labels")
        if body.prompts and len(body.prompts) != len(body.query):
            raise HTTPFailure(422, f"prompts: {len(body.prompts)} prompts for {len(body.query)} queries", "prompts")
        eng = _engine()
        probs = _problems(body.labels, "labels", eng)
        texts = [contracts.completion_from_query(q, body.prompts[i] if body.prompts else None)
                 for i, q in enumerate(body.query)]

        async def work():
            outcomes = await _score_pairs(eng, probs, texts)
            return contracts.openrlhf_response(outcomes)

        return await _scored(request, work)

    @app.post("/verify")
    async def verify(request: Request) -> Response:
        body: VerifyRequest = await _body(request, VerifyRequest)
        eng = _engine()
        label = body.problem if body.problem is not None else body.problem_id
        if label is None:
            raise HTTPFailure(422, "problem: give a problem (object or JSON string) or a problem_id", "problem")
        probs = _problems([label], "problem" if body.problem is not None else "problem_id", eng, indexed=False)
        try:
            text = contracts.response_text(body.response)
        except TypeError as exc:
            raise HTTPFailure(422, f"response: {exc}", "response") from None

        echo = body.model_dump(exclude={"problem", "problem_id"})  # the request, as BaseVerifyResponse has it

        async def work():
            return {**echo, **contracts.nemo_response((await _score_pairs(eng, probs, [text]))[0])}

        return await _scored(request, work)

    return app


ROUTES = ("/health", "/metrics", "/check", "/score", "/openrlhf", "/verify")
METRICS_PUSH_S = 1.0  # a Ray replica sends its metrics to the shared actor this often
METRICS_MAX_AGE_S = 30.0  # a replica silent this long is gone: left out of /metrics


async def _share(app: FastAPI, shared: tuple[str, str]):
    """Use the shared actor for idempotency and metrics; the task that pushes this replica's metrics."""
    import uuid

    import ray

    from prosfi.serve.shared import RayReplyStore

    name, namespace = shared
    actor = ray.get_actor(name, namespace=namespace)
    eng, metrics = app.state.engine, app.state.metrics
    stale_s = app.state.settings.serve.queue_timeout_s + 5.0  # past its deadline a first attempt is dead
    replica = uuid.uuid4().hex
    eng.replies = RayReplyStore(actor, replica, stale_s, metrics)
    app.state.shared = (actor, replica)
    await actor.push_metrics.remote(replica, metrics.text().decode())  # alive from the start

    async def push() -> None:
        while True:
            try:
                await actor.push_metrics.remote(replica, metrics.text().decode())
            except Exception:  # noqa: BLE001 - metrics must never stop a replica
                log.warning("prosfi serve: cannot push metrics to the shared actor", exc_info=True)
            await asyncio.sleep(METRICS_PUSH_S)

    return asyncio.create_task(push(), name="prosfi-metrics-push")


class _Guard:
    """Pure ASGI middleware (cheaper than BaseHTTPMiddleware): bearer token, declared body size, and the
    request count and latency per route and status."""

    def __init__(self, app, token: str | None, max_body: int, metrics: Metrics) -> None:
        self.app, self.token, self.max_body, self.metrics = app, token, max_body, metrics

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = scope.get("path", "")
        started = time.perf_counter()
        status = {"code": 500}

        async def sending(message) -> None:
            if message["type"] == "http.response.start":
                status["code"], status["started"] = message["status"], True
            await send(message)

        failure = self._refuse(scope, route)
        self.metrics.in_flight.inc()
        try:
            if failure is not None:
                await _error(failure)(scope, receive, sending)
            else:
                try:
                    await self.app(scope, receive, sending)
                except Exception as exc:  # every error body is the documented JSON, a bug's too
                    if status.get("started"):
                        raise
                    log.exception("prosfi serve: internal error on %s", route)
                    await _error(HTTPFailure(500, f"internal error: {type(exc).__name__}: {exc}"[:300]))(
                        scope, receive, sending)
        finally:
            self.metrics.in_flight.dec()
            known = route if route in ROUTES else "other"
            self.metrics.requests.labels(known, str(status["code"])).inc()
            self.metrics.latency.labels(known).observe(time.perf_counter() - started)

    def _refuse(self, scope, route: str) -> HTTPFailure | None:
        headers = dict(scope.get("headers") or ())
        if self.token and route != "/health":
            auth = headers.get(b"authorization", b"").decode("latin-1")
            given = auth[7:] if auth[:7].lower() == "bearer " else ""
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return HTTPFailure(401, "missing or wrong bearer token (Authorization: Bearer TOKEN)",
                                   "Authorization")
        length = headers.get(b"content-length", b"")
        if length.isdigit() and int(length) > self.max_body:
            return HTTPFailure(413, f"request body of {int(length)} bytes is over max_body_bytes ({self.max_body})")
        return None


def _error(exc: HTTPFailure) -> JSONResponse:
    return JSONResponse({"error": exc.error, "field": exc.field}, status_code=exc.status)


def _chain(overrides: dict):
    """ChainConfig with the request's overrides (their keys and JSON types checked by `ChainOverrides`); a value
    the dataclass refuses (`max_steps: 0`) is a 422 too."""
    try:
        return chain_config(overrides)
    except ValueError as exc:
        raise HTTPFailure(422, str(exc), "chain") from None


def _problems(labels: list, name: str, eng: Engine, indexed: bool = True) -> list:
    out = []
    for i, label in enumerate(labels):
        try:
            out.append(contracts.parse_problem(label, eng.problems))
        except ValueError as exc:
            where = f"{name}.{i}" if indexed else name
            raise HTTPFailure(422, f"{where}: {exc}", where) from None
    return out


async def _score_pairs(eng: Engine, problems: list, texts: list[str]) -> list[Outcome]:
    """Score (problem, text) pairs in the default mode through the same queue and record builder."""
    mapping = {f"{i}": p for i, p in enumerate(problems)}
    reward = RewardConfig(mode=eng.settings.reward)
    entries = eng.entries([{"problem_id": f"{i}", "completion": t} for i, t in enumerate(texts)], mapping,
                          reward.mode)
    return await eng.score(entries, mapping, reward, chain_config(None))


__all__ = ["ROUTES", "HTTPFailure", "create_app"]
