"""``dkg serve``'s HTTP layer without a model: the OpenAPI schema, and bad input refused with a clear 4xx.

The engine is the real one, not started (no model loaded), so nothing here needs Neo4j: the routes
that would answer say 503 "still loading", everything in front of them (size, types, keys, rate,
CORS) is checked for real through Starlette's test client.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dkg.serve.app import RateLimiter, create_app
from dkg.serve.engine import Engine
from dkg.settings import Settings, load_settings


def _client(tmp_path: Any, **overrides: Any) -> TestClient:
    settings: Settings = load_settings(state_dir=tmp_path / "state", **overrides)
    return TestClient(create_app(settings, Engine(settings), start=False))


@pytest.fixture()
def client(tmp_path: Any) -> TestClient:
    return _client(tmp_path)


def test_openapi_schema_has_every_route_with_its_request_and_response_models(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    paths = schema["paths"]
    assert set(paths) == {"/v1/ask", "/v1/web/ask", "/v1/guidelines", "/v1/attributes",
                          "/v1/guidelines/{code}/{version}/graph.svg", "/v1/health", "/cds-services",
                          "/cds-services/{service_id}"}
    models = schema["components"]["schemas"]

    def ref(op: dict[str, Any], status: str = "200") -> str:
        content = op["responses"][status]["content"]["application/json"]["schema"]
        return str(content.get("$ref") or content.get("items", {}).get("$ref")).rsplit("/", 1)[-1]

    ask = paths["/v1/ask"]["post"]
    assert ask["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/AskRequest")
    assert ref(ask) == "AskResponse"
    assert set(models["AskResponse"]["properties"]) == {"status", "answer", "advisable", "cypher", "evidence",
                                                        "missing_facts", "missing", "facts", "facts_read",
                                                        "unread", "query_source", "message"}
    assert set(models["MissingFact"]["properties"]) == {"attr", "label", "type", "values", "unit"}
    assert set(models["EvidenceOut"]["properties"]) == {"guideline", "version", "page", "box", "text", "role"}
    assert models["AskRequest"]["properties"]["question"]["maxLength"] == 1000
    web = paths["/v1/web/ask"]["post"]
    assert web["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/WebAskRequest")
    assert ref(web) == "WebAskResponse"
    assert ref(paths["/v1/guidelines"]["get"]) == "GuidelineOut"
    assert ref(paths["/v1/attributes"]["get"]) == "AttributeOut"
    assert ref(paths["/v1/health"]["get"]) == "HealthOut"
    svg = paths["/v1/guidelines/{code}/{version}/graph.svg"]["get"]
    assert {p["name"] for p in svg["parameters"]} == {"code", "version", "facts"}
    for route in (ask, web):  # every refusal documented with its error model
        assert {"401", "413", "422", "429", "503", "504"} <= set(route["responses"])
        assert ref(route, "429") == "ErrorOut"
    assert {"400", "404", "412"} <= set(paths["/cds-services/{service_id}"]["post"]["responses"])
    assert client.get("/docs").status_code == 200


def test_bad_input_gets_a_clear_4xx(client: TestClient) -> None:
    too_big = client.post("/v1/ask", content=b'{"question": "' + b"a" * 20_000 + b'"}',
                          headers={"content-type": "application/json"})
    assert too_big.status_code == 413 and "16384 bytes" in too_big.json()["detail"]
    wrong_type = client.post("/v1/ask", json={"question": 5})
    assert wrong_type.status_code == 422 and wrong_type.json()["detail"][0]["loc"] == ["body", "question"]
    assert client.post("/v1/ask", json={}).status_code == 422
    assert client.post("/v1/ask", content=b"not json", headers={"content-type": "application/json"}).status_code == 422
    long = client.post("/v1/ask", json={"question": "x" * 1001})
    assert long.status_code == 422
    control = client.post("/v1/ask", json={"question": "next step?\u202e"})
    assert control.status_code == 422 and "control character" in control.json()["detail"]
    unknown = client.post("/v1/ask", json={"question": "next step?", "facts": {"shoe_size": 44}})
    assert unknown.status_code == 422 and "unknown attribute 'shoe_size'" in unknown.json()["detail"]
    bad_value = client.post("/v1/ask", json={"question": "next step?", "facts": {"mrd": "purple"}})
    assert bad_value.status_code == 422 and "mrd must be one of" in bad_value.json()["detail"]
    bad_age = client.post("/v1/ask", json={"question": "next step?", "facts": {"age": 400}})
    assert bad_age.status_code == 422 and "outside" in bad_age.json()["detail"]
    svg = client.get("/v1/guidelines/ALL/2.2022/graph.svg", params={"facts": "[1, 2"})
    assert svg.status_code == 422 and "not JSON" in svg.json()["detail"]
    # well-formed but nothing loaded yet: 503 with the reason, never a 500
    loading = client.post("/v1/ask", json={"question": "next step?"})
    assert loading.status_code == 503 and "loading" in loading.json()["detail"]
    assert client.get("/static/../app.py").status_code == 404


def test_api_keys_when_configured(tmp_path: Any) -> None:
    client = _client(tmp_path, api_keys="k-one, k-two")
    assert client.get("/v1/attributes").status_code == 401
    assert client.get("/v1/attributes", headers={"x-api-key": "wrong"}).status_code == 401
    assert client.get("/v1/attributes", headers={"x-api-key": "k-two"}).status_code == 200
    assert client.get("/v1/attributes", headers={"authorization": "Bearer k-one"}).status_code == 200
    assert client.get("/").status_code == 200  # the page itself is public; it asks for the key on a 401


def test_one_client_sending_1000_requests_is_slowed_with_429_and_the_service_stays_up(client: TestClient) -> None:
    t0 = time.monotonic()
    responses = [client.get("/v1/attributes") for _ in range(1000)]
    seconds = time.monotonic() - t0
    codes = [r.status_code for r in responses]
    assert set(codes) == {200, 429}
    # the burst of 60, then 10 a second (however long the 1,000 requests took on a busy machine)
    assert 60 <= codes.count(200) <= 60 + 10 * seconds + 1, (codes.count(200), seconds)
    # every refusal says when to come back (one asked after the loop may already find a token refilled: a CI
    # run once paused 0.1 s there)
    refused = [r for r in responses if r.status_code == 429]
    assert all(int(r.headers["retry-after"]) >= 1 for r in refused)
    assert client.get("/").status_code == 200


def test_rate_limiter_refills_and_keeps_clients_apart() -> None:
    limiter = RateLimiter(rate=1000.0, burst=2)
    assert limiter.take("a") == 0 and limiter.take("a") == 0
    assert limiter.take("a") > 0  # burst spent
    assert limiter.take("b") == 0  # another client has its own bucket
    assert RateLimiter(rate=0, burst=1).take("a") == 0  # 0: no limit


def test_cors_closed_by_default_and_open_only_to_configured_origins(tmp_path: Any) -> None:
    closed = _client(tmp_path).get("/v1/attributes", headers={"origin": "https://evil.example"})
    assert "access-control-allow-origin" not in closed.headers
    open_ = _client(tmp_path, serve_cors_origins="https://portal.example")
    ok = open_.get("/v1/attributes", headers={"origin": "https://portal.example"})
    assert ok.headers["access-control-allow-origin"] == "https://portal.example"
    other = open_.get("/v1/attributes", headers={"origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers


def test_access_log_leaves_questions_out_unless_enabled(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("INFO", logger="dkg.access"):
        _client(tmp_path).post("/v1/ask", json={"question": "secret patient story"})
        _client(tmp_path, serve_log_questions=True).post("/v1/ask", json={"question": "logged on purpose"})
    lines = [r.getMessage() for r in caplog.records if r.name == "dkg.access"]
    assert len(lines) == 2 and '"path": "/v1/ask"' in lines[0] and '"status": 503' in lines[0]
    assert "secret patient story" not in lines[0]
    assert "logged on purpose" in lines[1]


def test_the_page_and_its_assets_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and 'id="question"' in page.text and 'name="viewport"' in page.text
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/static/style.css").status_code == 200


def test_the_api_models_mirror_the_answers_the_cli_prints() -> None:
    """The HTTP schema is its own contract (dkg/serve/app.py) but must not drift from the CLI's JSON."""
    from dkg.qa.answer import Answer, Evidence
    from dkg.serve.app import AskResponse, EvidenceOut, ReferenceOut, WebAskResponse
    from dkg.web.rag import RagAnswer, Reference

    assert set(AskResponse.model_fields) == set(Answer.model_fields) - {"question"}
    assert set(EvidenceOut.model_fields) == set(Evidence.model_fields)
    assert set(WebAskResponse.model_fields) == set(RagAnswer.model_fields)
    assert set(ReferenceOut.model_fields) == set(Reference.model_fields)
