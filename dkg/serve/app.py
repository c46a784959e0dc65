"""``dkg serve``: the question answerer and the web guideline chatbot over HTTP, and a page for clinicians.

Starlette's ASGI stack through FastAPI: the request and response models below are the OpenAPI
schema (``/docs``, ``/openapi.json``), validation of wrong types is FastAPI's 422, and the blocking
work (the model, Neo4j) runs in the thread pool so the event loop keeps taking requests.

Read-only by construction: the answerer opens Neo4j sessions in READ access mode and refuses any
generated query whose summary is not read-only; no route writes to the graph, the registry or the
state folder. Neo4j Community has no roles (role-based access is an Enterprise feature), so a
read-only *user* cannot be created there; against Enterprise or Aura, point ``NEO4J_USERNAME`` at
a user with the ``reader`` role.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, JSONResponse, Response
from pydantic import BaseModel, Field

from dkg.errors import DkgError, GraphLoadError, ServiceUnavailableError
from dkg.inputs import question_problem
from dkg.qa.fields import MissingFact
from dkg.serve.engine import Engine, NotReadyError
from dkg.settings import Settings

STATIC = Path(__file__).parent / "static"
MAX_QUESTION = 1000
access_log = logging.getLogger("dkg.access")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


# --- request and response models (the OpenAPI schema) ---------------------------------------
FactValue = float | int | str | bool


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION, description="A clinical question in English.")
    facts: dict[str, FactValue] = Field(default_factory=dict, max_length=30,
                                        description="Patient facts given beside the question (attribute → value, "
                                                    "see /v1/attributes); they win over the question's words.")


class WebAskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION, description="A question in Japanese or English.")


class EvidenceOut(BaseModel):
    """Where an answer comes from: guideline, version, page and box."""

    guideline: str
    version: str
    page: str
    box: str
    text: str
    role: str = "answer"
    """``answer``, or ``on the way``: a condition the way to the answer passed before it."""


class AskResponse(BaseModel):
    """The same object as ``dkg ask --json``."""

    status: Literal["answered", "needs_more_info", "not_covered", "rejected"]
    answer: str
    advisable: bool | None = None
    cypher: str | None = None
    evidence: list[EvidenceOut] = Field(default_factory=list)
    missing_facts: list[str] = Field(default_factory=list)
    missing: list[MissingFact] = Field(default_factory=list)
    """Each missing fact as a field: the attribute (the ``facts`` key), its label, type and values."""
    facts: dict[str, Any] = Field(default_factory=dict)
    facts_read: list[dict[str, Any]] = Field(default_factory=list)
    unread: list[str] = Field(default_factory=list)
    query_source: str = ""
    message: str = ""


class ReferenceOut(BaseModel):
    url: str
    title: str
    score: float
    section: str | None = None
    """The heading path of the passage that made the page a reference (best mode)."""


class ScopeOut(BaseModel):
    """A thing the question names and what the site says of it (best mode)."""

    term: str
    verdict: str
    """``subject``, ``about``, ``mentioned``, ``related``, ``partial`` (in scope); ``passing``, ``absent`` (refused)."""
    kind: str
    passages: int
    heading: bool


class WebAskResponse(BaseModel):
    """The same object as ``dkg web ask --json``."""

    status: str
    answer: str
    keywords: list[str]
    references: list[ReferenceOut] = Field(default_factory=list)
    language: str = "en"
    generator: str = "extractive"
    reference_chars: int = 0
    detail: str | None = None
    mode: str = "protocol"
    """``best`` or ``protocol``: the method that answered."""
    scope: list[ScopeOut] = Field(default_factory=list)
    """Best mode: the conditions, drugs and tests the question names, each with the site's verdict."""


class VersionOut(BaseModel):
    version: str
    seq: int
    loaded_at: str | None
    kind: str | None
    current: bool


class GuidelineOut(BaseModel):
    code: str
    name: str | None
    current: str | None
    versions: list[VersionOut]


class AttributeOut(BaseModel):
    name: str
    type: str
    unit: str | None = None
    values: list[str] = Field(default_factory=list)
    min: float | None = None
    max: float | None = None


class HealthOut(BaseModel):
    status: Literal["ok", "degraded", "loading"]
    neo4j: str
    model_run: str | None
    guidelines: list[str]
    site: str | None
    loaded_at: float | None
    reloads: int
    problems: list[str]


class ErrorOut(BaseModel):
    detail: str


# --- protection: body size, rate, keys, access log ------------------------------------------
class BodyLimit:
    """Refuse bodies over ``limit`` bytes with 413, by the header or while the body streams in."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _send_json(send, 413, {"detail": f"request body over {self.limit} bytes"})
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            msg = await receive()
            seen += len(msg.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return msg

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _send_json(send, 413, {"detail": f"request body over {self.limit} bytes"})


class _TooLarge(Exception):
    pass


async def _send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


class RateLimiter:
    """A token bucket per client (its API key, else its address): ``rate`` per second, ``burst`` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """0 when the request may go ahead, else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[client] = (tokens - 1.0, now)
                return 0.0
            self._buckets[client] = (tokens, now)
            if len(self._buckets) > 10_000:  # forget idle clients
                self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < 60}
            return (1.0 - tokens) / self.rate


def _keys(settings: Settings) -> list[str]:
    raw = settings.api_keys.get_secret_value() if settings.api_keys else ""
    return [k.strip() for k in raw.split(",") if k.strip()]


def _presented_key(request: Request) -> str | None:
    key = request.headers.get("x-api-key")
    auth = request.headers.get("authorization", "")
    if key is None and auth.lower().startswith("bearer "):
        key = auth[7:].strip()
    return key


# --- the application --------------------------------------------------------------------------
def create_app(settings: Settings, engine: Engine | None = None, *, start: bool = True) -> FastAPI:
    """The service. ``start``: load the model now and keep watching for a new one (off in unit tests)."""
    engine = engine or Engine(settings)
    keys = _keys(settings)
    limiter = RateLimiter(settings.serve_rate, settings.serve_burst)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> Any:
        if start:
            await run_in_threadpool(engine.start)
        yield
        engine.stop()

    app = FastAPI(title="dkg", version="1", lifespan=lifespan,
                  description="Answers from the Decision Knowledge Graph and the web guideline chatbot.")
    app.state.engine = engine

    origins = [o.strip() for o in settings.serve_cors_origins.split(",") if o.strip()]
    if origins:  # closed unless configured
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST"],
                           allow_headers=["content-type", "x-api-key", "authorization"])

    @app.middleware("http")
    async def access(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        t0 = time.perf_counter()
        client = request.client.host if request.client else "-"
        status = 500
        try:
            response = await call_next(request)
            status = response.status_code
            return response
        finally:
            entry: dict[str, Any] = {"ts": round(time.time(), 3), "client": client, "method": request.method,
                                     "path": request.url.path, "status": status,
                                     "ms": round((time.perf_counter() - t0) * 1000, 1)}
            if settings.serve_log_questions and getattr(request.state, "question", None):
                entry["question"] = request.state.question
            access_log.info(json.dumps(entry, ensure_ascii=False))

    app.add_middleware(BodyLimit, limit=settings.serve_max_body)

    async def guard(request: Request) -> None:
        """API key (when keys are configured) and the client's rate."""
        presented = _presented_key(request)
        if keys and not any(presented is not None and hmac.compare_digest(presented, k) for k in keys):
            raise HTTPException(401, "an API key is needed (header X-API-Key or Authorization: Bearer)")
        client = f"key:{presented}" if keys and presented else (request.client.host if request.client else "-")
        wait = limiter.take(client)
        if wait:
            raise HTTPException(429, f"too many requests from this client; retry in {wait:.1f} s",
                                headers={"Retry-After": str(max(1, math.ceil(wait)))})

    errors: dict[int | str, dict[str, Any]] = {
        code: {"model": ErrorOut} for code in (401, 413, 422, 429, 503, 504)}

    async def _work(fn: Callable[..., bytes], *args: Any) -> Response:
        """The engine's JSON bytes as the response (already the response model's shape: not validated again)."""
        try:
            body = await asyncio.wait_for(run_in_threadpool(fn, *args), settings.serve_timeout_s)
            return Response(body, media_type="application/json")
        except TimeoutError as e:
            raise HTTPException(504, f"no answer within {settings.serve_timeout_s:g} s") from e
        except NotReadyError as e:
            raise HTTPException(503, str(e)) from e
        except ServiceUnavailableError as e:
            raise HTTPException(503, str(e)) from e

    def _checked(request: Request, question: str) -> str:
        problem = question_problem(question, MAX_QUESTION)
        if problem is not None:
            raise HTTPException(422, problem)
        request.state.question = question
        return question

    @app.post("/v1/ask", response_model=AskResponse, responses={**errors, 422: {"model": AskResponse}},
              dependencies=[Depends(guard)],
              summary="Answer a clinical question from the graph (the same JSON as `dkg ask --json`); "
                      "status `rejected` comes with HTTP 422")
    async def ask(body: AskRequest, request: Request) -> Response:
        question = _checked(request, body.question)
        facts = _check_facts(body.facts)
        response = await _work(engine.ask, question, facts)
        if b'"status":"rejected"' in bytes(response.body):  # the question could not be taken (an injected
            response.status_code = 422  # query, a reply that is not valid read-only Cypher): same JSON, a 4xx
        return response

    @app.post("/v1/web/ask", response_model=WebAskResponse, responses=errors, dependencies=[Depends(guard)],
              summary="Answer from the web guideline's pages or refuse (the same JSON as `dkg web ask --json`)")
    async def web_ask(body: WebAskRequest, request: Request) -> Response:
        return await _work(engine.web_ask, _checked(request, body.question))

    @app.get("/v1/guidelines", response_model=list[GuidelineOut], responses=errors, dependencies=[Depends(guard)],
             summary="Loaded guidelines: code, name, current version and every loaded version")
    async def list_guidelines() -> list[dict[str, Any]]:
        return await run_in_threadpool(_guidelines, settings)

    @app.get("/v1/attributes", response_model=list[AttributeOut], responses=errors, dependencies=[Depends(guard)],
             summary="Patient attributes the graph's constraints use, with their types and values")
    async def attributes() -> list[dict[str, Any]]:
        return await run_in_threadpool(_attributes)

    @app.get("/v1/guidelines/{code}/{version}/graph.svg", responses={**errors, 404: {"model": ErrorOut}},
             dependencies=[Depends(guard)], response_class=Response,
             summary="The decision graph as SVG; `facts` (JSON) highlights that patient's path")
    async def graph_svg(code: str, version: str,
                        facts: str | None = Query(default=None, max_length=4000,
                                                  description='Patient facts as JSON, e.g. {"age": 68}')) -> Response:
        patient = _check_facts(_json_facts(facts)) if facts else None
        try:
            svg = await run_in_threadpool(_svg, settings, code, version, patient)
        except GraphLoadError as e:
            raise HTTPException(404, str(e)) from e
        return Response(svg, media_type="image/svg+xml")

    @app.get("/v1/health", response_model=HealthOut, summary="Whether Neo4j answers and what is loaded")
    async def health() -> dict[str, Any]:
        return await run_in_threadpool(_health, settings, engine)

    @app.get("/cds-services", summary="CDS Hooks discovery: the dkg-next-step service (patient-view)",
             dependencies=[Depends(guard)])
    async def cds_discovery() -> dict[str, Any]:
        from dkg.serve import cds

        return await run_in_threadpool(cds.discovery)

    @app.post("/cds-services/{service_id}", summary="CDS Hooks: cards for a patient-view request",
              responses={**errors, 400: {"model": ErrorOut}, 404: {"model": ErrorOut}, 412: {"model": ErrorOut}},
              dependencies=[Depends(guard)])
    async def cds_call(service_id: str, request: Request) -> dict[str, Any]:
        from dkg.serve import cds

        if service_id != cds.SERVICE_ID:
            raise HTTPException(404, f"no CDS service {service_id!r} (see GET /cds-services)")
        try:
            body = await request.json()
        except ValueError as e:
            raise HTTPException(400, "the body is not JSON") from e
        if not isinstance(body, dict):
            raise HTTPException(400, "the body is not a CDS Hooks request object")
        try:
            result: dict[str, Any] = await run_in_threadpool(cds.cards_for, settings, body)
        except cds.CdsRequestError as e:
            raise HTTPException(e.status, str(e)) from e
        except ServiceUnavailableError as e:
            raise HTTPException(503, str(e)) from e
        return result

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/static/{name}", include_in_schema=False)
    async def static(name: str) -> FileResponse:
        path = STATIC / name
        if "/" in name or name.startswith(".") or not path.is_file():
            raise HTTPException(404, "no such file")
        return FileResponse(path)

    @app.exception_handler(DkgError)
    async def dkg_error(_: Request, exc: DkgError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    return app


def _json_facts(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError as e:
        raise HTTPException(422, f"facts is not JSON: {e}") from e
    if not isinstance(value, dict):
        raise HTTPException(422, "facts must be a JSON object of attribute → value")
    return value


def _check_facts(facts: dict[str, Any]) -> dict[str, Any]:
    """Given facts checked against the attributes: known names, numbers in range, values in the set."""
    from dkg.constraints.vocabulary import load_vocabulary

    attrs = load_vocabulary().attributes
    out: dict[str, Any] = {}
    for name, value in facts.items():
        spec = attrs.get(name)
        if spec is None:
            raise HTTPException(422, f"unknown attribute {name!r} (see /v1/attributes)")
        kind = spec.get("type")
        if kind == "number":
            try:
                number = float(value)
            except (TypeError, ValueError) as e:
                raise HTTPException(422, f"{name} must be a number, not {value!r}") from e
            lo, hi = spec.get("min"), spec.get("max")
            if not math.isfinite(number) or (lo is not None and number < lo) or (hi is not None and number > hi):
                raise HTTPException(422, f"{name} = {value!r} is outside {lo}–{hi}")
            out[name] = int(number) if number.is_integer() else number
        elif kind == "category":
            values = [str(v) for v in spec.get("values", [])]
            if str(value) not in values:
                raise HTTPException(422, f"{name} must be one of {values}, not {value!r}")
            out[name] = str(value)
        else:
            if not isinstance(value, str) or len(value) > 200:
                raise HTTPException(422, f"{name} must be a short text")
            out[name] = value
    return out


def _guidelines(settings: Settings) -> list[dict[str, Any]]:
    from dkg.graph import loader

    out = []
    for g in loader.guidelines(settings):
        versions = [{"version": str(v["version"]), "seq": int(v["seq"] or 0), "kind": v.get("kind"),
                     "loaded_at": str(v["loadedAt"]) if v.get("loadedAt") is not None else None,
                     "current": bool(v["current"])} for v in loader.versions(settings, str(g["code"]))]
        current = next((v["version"] for v in versions if v["current"]), g.get("version"))
        out.append({"code": g["code"], "name": g.get("name"), "current": current, "versions": versions})
    return out


def _attributes() -> list[dict[str, Any]]:
    from dkg.constraints.vocabulary import load_vocabulary

    out = []
    for name, spec in sorted(load_vocabulary().attributes.items()):
        unit = spec.get("unit") or ("/".join(spec["units"]) if spec.get("units") else None)
        out.append({"name": name, "type": str(spec.get("type", "text")), "unit": unit,
                    "values": [str(v) for v in spec.get("values", [])], "min": spec.get("min"), "max": spec.get("max")})
    return out


def _svg(settings: Settings, code: str, version: str, patient: dict[str, Any] | None) -> bytes:
    from dkg.graph.render import render_svg

    return render_svg(settings, code, version, patient)


def _health(settings: Settings, engine: Engine) -> dict[str, Any]:
    from dkg.services.neo4j import ping

    try:
        neo4j = f"ok ({ping(settings)})"
    except DkgError as e:
        neo4j = f"down: {e}"
    loaded = engine.current
    problems = list(loaded.problems) if loaded else []
    if engine.last_error:
        problems.append(f"last reload failed: {engine.last_error}")
    status = "loading" if loaded is None else "ok" if neo4j.startswith("ok") and not problems else "degraded"
    return {"status": status, "neo4j": neo4j, "model_run": loaded.stamp.model_run if loaded else None,
            "guidelines": [f"{c} {v}" for c, v, _ in loaded.stamp.graph] if loaded else [],
            "site": loaded.site_name if loaded else None, "loaded_at": loaded.loaded_at if loaded else None,
            "reloads": engine.reloads, "problems": problems}


def serve(settings: Settings, host: str, port: int) -> None:
    """Run the service until interrupted (uvicorn, one process; the model is loaded once)."""
    import uvicorn

    from dkg.serve.client import pid_file, write_pid_file

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    write_pid_file(settings, f"http://{shown}:{port}")  # `dkg ask` sends its questions here while it runs
    try:
        uvicorn.run(create_app(settings), host=host, port=port, access_log=False, log_level="info",
                    timeout_keep_alive=5, limit_concurrency=256)
    finally:
        pid_file(settings).unlink(missing_ok=True)
