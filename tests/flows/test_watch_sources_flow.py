"""The watcher flow with a web guideline source and with a corrupt PDF (no graph services needed)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from dkg.errors import IngestError
from dkg.settings import load_settings
from dkg.watch import load_state
from tests.fixtures.web_sites import Route, page, serve

pytestmark = [pytest.mark.slow]


def test_a_changed_web_guideline_is_recrawled_and_an_unchanged_one_is_not(prefect_harness: None,
                                                                          tmp_path: Path) -> None:
    from flows.watch_guidelines import watch_guidelines

    routes = {
        "/g/toc.html": Route(page("Contents", '<a href="a.html">Induction</a> <a href="b.html">Relapse</a>')),
        "/g/a.html": Route(page("Induction", "<p>Adults with acute lymphoblastic leukemia receive induction "
                                             "chemotherapy with a tyrosine kinase inhibitor when Ph-positive.</p>")),
        "/g/b.html": Route(page("Relapse", "<p>Relapsed B-cell ALL is treated with blinatumomab or "
                                           "inotuzumab ozogamicin, then allogeneic transplant.</p>")),
    }
    name = f"web-{uuid.uuid4().hex[:8]}"
    with serve(routes) as base:
        sources = tmp_path / "sources.yaml"
        sources.write_text(f"sources:\n  - name: {name}\n    kind: web\n    location: {base}/g/toc.html\n")
        first = watch_guidelines(str(sources))
        assert first.loaded == [f"web {name}"] and first.downstream is None
        assert watch_guidelines(str(sources)).changed == []
        routes["/g/b.html"].body = routes["/g/b.html"].body.replace(b"then", b"and then")
        third = watch_guidelines(str(sources))
        assert [d.reason for d in third.changed] == ["table of contents or a page changed"]
        assert third.loaded == [f"web {name}"]


def test_a_corrupt_pdf_fails_the_poll_by_name_and_is_tried_again(prefect_harness: None, tmp_path: Path) -> None:
    from flows.watch_guidelines import watch_guidelines

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "broken-guideline.pdf").write_bytes(b"%PDF-1.7\nthis is not a PDF body\n")
    name = f"inbox-{uuid.uuid4().hex[:8]}"
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - name: {name}\n    kind: folder\n    location: {inbox}\n")
    for _ in range(2):  # not remembered: the next poll tries it again and fails the same way
        with pytest.raises(IngestError, match=rf"{name}: .*broken-guideline\.pdf"):
            watch_guidelines(str(sources))
    assert name not in load_state(load_settings().state_path)


def test_a_source_that_is_briefly_down_is_retried_with_backoff(prefect_harness: None, tmp_path: Path) -> None:
    """503 on the first request, then the table of contents: the check task retries (5 s back-off) and succeeds."""
    from flows.watch_guidelines import watch_guidelines

    class Flaky(dict[str, Route]):
        calls = 0

        def get(self, key: str, default: Route | None = None) -> Route | None:  # type: ignore[override]
            if key == "/g/toc.html":
                Flaky.calls += 1
                if Flaky.calls == 1:
                    return Route(b"busy", status=503)
            return super().get(key, default)

    routes = Flaky({"/g/toc.html": Route(page("Contents", '<a href="a.html">A</a>')),
                    "/g/a.html": Route(page("A", "<p>Induction chemotherapy for adults with ALL.</p>"))})
    name = f"flaky-{uuid.uuid4().hex[:8]}"
    with serve(routes) as base:
        sources = tmp_path / "sources.yaml"
        sources.write_text(f"sources:\n  - name: {name}\n    kind: web\n    location: {base}/g/toc.html\n")
        report = watch_guidelines(str(sources))
    assert report.loaded == [f"web {name}"] and Flaky.calls >= 2


def test_fanning_out_without_workers_fails_at_once_naming_the_pool(prefect_harness: None, tmp_path: Path) -> None:
    """fan_out sends each version to a deployment run by the workers of a pool: with the deployment unknown, the
    pool unknown, or no worker of it online, the poll stops before any work, naming what is missing."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate

    from dkg.errors import ConfigError
    from flows.build_dkg import build_dkg
    from flows.watch_guidelines import watch_guidelines

    tag = uuid.uuid4().hex[:8]
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - name: fan-{tag}\n    kind: folder\n    location: {tmp_path}\n")
    with pytest.raises(ConfigError, match="no-such/deployment"):
        watch_guidelines(str(sources), fan_out=True, build_deployment="no-such/deployment")
    pool = f"idle-{tag}"
    with get_client(sync_client=True) as client:
        client.create_work_pool(WorkPoolCreate(name=pool, type="process"))
        flow_id = client.create_flow(build_dkg)
        client.create_deployment(flow_id=flow_id, name=f"fan-{tag}", work_pool_name=pool,
                                 entrypoint="flows/build_dkg.py:build_dkg")
    for missing in ("no-such-pool", pool):  # unknown; known but without a worker
        with pytest.raises(ConfigError, match=f"online worker of work pool '{missing}'"):
            watch_guidelines(str(sources), fan_out=True, build_deployment=f"build-dkg/fan-{tag}", pool=missing)
    assert not (tmp_path / ".dkg").exists()
