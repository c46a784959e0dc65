"""Flow: poll every configured guideline source; run the pipeline only for what changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.artifacts import create_table_artifact
from prefect.client.schemas.objects import FlowRun, State
from prefect.futures import PrefectFuture
from prefect.logging import get_run_logger
from pydantic import BaseModel

from dkg.errors import ConfigError, IngestError
from dkg.settings import load_settings
from dkg.watch import Detected, SeenState, Source, check, commit, load_sources, load_state
from flows.build_dkg import BuildResult, build_dkg
from flows.guideline_pipeline import DownstreamResult, refresh_qa_and_model
from flows.ingest_web_guideline import ingest_web_guideline
from tasks.common import rename_run, retry_transient


class WatchReport(BaseModel):
    """What one poll found and did."""

    checked: int
    changed: list[Detected]
    loaded: list[str]
    """``CODE VERSION`` of each new PDF run through build-dkg, ``web NAME`` of each re-crawled site."""
    failed: list[str] = []
    downstream: DownstreamResult | None = None
    """The QA dataset and model refresh (``full_pipeline``), run once after all loads of the poll."""


@task(name="check-source", task_run_name="check-{source.name}", retries=3, retry_delay_seconds=[5, 30, 120],
      retry_condition_fn=retry_transient)
def check_task(source: Source) -> list[Detected]:
    """New documents of one source."""
    settings = load_settings()
    state = load_state(settings.state_path).get(source.name)
    return check(source, state or SeenState(), settings.state_path / "watch" / source.name,
                 timeout_s=settings.web_timeout_s)


@task(name="remember-processed")
def commit_task(found: list[Detected]) -> None:
    """Record the documents as processed (after every stage for them succeeded)."""
    state_dir = load_settings().state_path
    for d in found:
        commit(state_dir, d)


@task(name="build-on-workers", task_run_name="build-on-workers-{source_name}")
def build_on_workers(source_name: str, paths: list[str], deployment: str) -> list[tuple[str, str | None]]:
    """The new versions of one source, in order, each a separate flow run of ``deployment`` that any worker
    of the pool may pick up; returns (path, label or None when it failed) per version. A failed version stops
    the later ones of the same source (a guideline's versions load in order)."""
    from prefect.deployments import run_deployment

    out: list[tuple[str, str | None]] = []
    for i, path in enumerate(paths):
        run = run_deployment(deployment, parameters={"source": path}, timeout=None,
                             flow_run_name=f"build {Path(path).name}")
        assert isinstance(run, FlowRun)  # the sync call, from a task's thread
        state = run.state
        if state is None or not state.is_completed():
            get_run_logger().error("%s: flow run %s of %s ended %s: %s", path, run.id, deployment,
                                   state.type.value if state else "without a state", state.message if state else "")
            out.append((path, None))
            out += [(p, None) for p in paths[i + 1:]]
            break
        out.append((path, run.name.removeprefix("build ").strip() if run.name.startswith("build ") else path))
    return out


def _fan_out_ready(pool: str, deployment: str) -> None:
    """Raise ConfigError unless ``deployment`` exists and ``pool`` has an online worker."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound, PrefectHTTPStatusError

    def unknown(e: Exception) -> bool:  # the API answers 404 for an unknown name
        return isinstance(e, ObjectNotFound) or (isinstance(e, PrefectHTTPStatusError)
                                                 and e.response.status_code == 404)

    with get_client(sync_client=True) as client:
        try:
            client.read_deployment_by_name(deployment)
        except (ObjectNotFound, PrefectHTTPStatusError) as e:
            if not unknown(e):
                raise
            raise ConfigError(f"fan_out runs each version as deployment {deployment!r}, which the API does not "
                              "know: deploy it (`prefect --no-prompt deploy --all` or `dkg cluster up`), or run the "
                              "watcher with fan_out=false") from None
        try:
            workers = client.read_workers_for_work_pool(work_pool_name=pool)
        except (ObjectNotFound, PrefectHTTPStatusError) as e:
            if not unknown(e):
                raise
            workers = []
    if not any(str(getattr(w.status, "value", w.status)).upper() == "ONLINE" for w in workers):
        raise ConfigError(f"fan_out needs an online worker of work pool {pool!r} (start them with `dkg cluster up`, "
                          "or run the watcher with fan_out=false)")


@flow(name="watch-guidelines", flow_run_name="watch {sources_file}")
def watch_guidelines(sources_file: str = "conf/sources.yaml", full_pipeline: bool = False, retrain: bool = True,
                     model_size: str = "small", with_baseline: bool = True, epochs: int | None = None,
                     max_train_items: int | None = None, training_data: str = "fresh", fan_out: bool = False,
                     build_deployment: str = "build-dkg/build-dkg", pool: str = "dkg-local") -> WatchReport:
    """Check each source; run what changed, then remember it. An unchanged poll runs nothing.

    A new PDF goes through build-dkg (ingest → extract → GX gate → load); a changed web guideline
    is re-crawled and re-indexed. With ``full_pipeline``, the QA dataset and the model are then
    refreshed once for all the guidelines that changed (refresh-qa-and-model). A document whose run
    failed is not remembered, so the next poll tries it again; the poll then fails, naming it.

    Args:
        sources_file: YAML with a ``sources`` list (name, kind: folder|url|web, location, pattern).
        full_pipeline: also rebuild and validate the QA dataset and retrain the model after a change.
        retrain: with ``full_pipeline``, retrain when the dataset version changed.
        model_size: ``small`` or ``paper``.
        with_baseline: also train the no-DKG baseline.
        epochs: override the size's number of epochs.
        max_train_items: train on a sample of this many items.
        training_data: ``fresh`` or ``maintained``, see train-text2cypher.
        fan_out: run each new PDF as a separate flow run of ``build_deployment`` on the workers of ``pool``
            (``dkg cluster up``): sources in parallel, the versions of one source in order.
        build_deployment: the deployment a fanned-out version runs (prefect.yaml's build-dkg).
        pool: the work pool whose workers must be online for ``fan_out``.
    """
    sources = load_sources(Path(sources_file))
    changed: list[Detected] = []
    done: list[Detected] = []
    loaded: list[str] = []
    failed: list[str] = []
    pdfs_done = 0
    if fan_out:
        _fan_out_ready(pool, build_deployment)
    fanned: list[tuple[Source, list[Detected], PrefectFuture[list[tuple[str, str | None]]]]] = []
    for src in sources:
        new_docs = check_task(src)
        if fan_out and src.kind != "web" and new_docs:
            changed += new_docs
            fanned.append((src, new_docs, build_on_workers.submit(src.name, [d.path for d in new_docs],
                                                                  build_deployment)))
            continue
        for found in new_docs:
            changed.append(found)
            state: State[Any]
            if src.kind == "web":
                state = ingest_web_guideline(found.path, src.name, return_state=True)
                label = f"web {src.name}"
            else:
                state = build_dkg(found.path, return_state=True)
                label = found.path
            ok = not state.is_failed()
            if ok and src.kind != "web":
                built = state.result()
                assert isinstance(built, BuildResult)
                label = f"{built.guideline} {built.version}"
                pdfs_done += 1
            if ok:
                done.append(found)
                loaded.append(label)
            else:
                why = state.result(raise_on_failure=False)
                failed.append(f"{src.name}: {found.path}: {why}"[:500])
    for src, docs, future in fanned:
        by_path = dict(future.result())
        for found in docs:
            got = by_path.get(found.path)
            if got is None:
                failed.append(f"{src.name}: {found.path}: its build-dkg flow run failed (see the run in the UI)")
                continue
            done.append(found)
            loaded.append(got)
            pdfs_done += 1
    downstream = None
    if full_pipeline and pdfs_done:  # cheap when a previous poll already refreshed them (it skips)
        downstream = refresh_qa_and_model(retrain=retrain, model_size=model_size, with_baseline=with_baseline,
                                          epochs=epochs, max_train_items=max_train_items,
                                          training_data=training_data)
    commit_task(done)  # only after every stage for them succeeded
    rename_run(f"watch: {', '.join(loaded) or 'no change'}"[:120])
    get_run_logger().info("%d source(s) checked, %d new document(s), %d processed, %d failed", len(sources),
                          len(changed), len(done), len(failed))
    create_table_artifact(key="watch-poll", table=[
        {"source": d.source, "version": d.version or "", "reason": d.reason, "file": d.path,
         "result": "processed" if d in done else "FAILED"} for d in changed
    ] or [{"source": "-", "version": "", "reason": "no change", "file": "", "result": "nothing to do"}])
    if failed:
        raise IngestError(f"{len(failed)} new document(s) failed and will be retried at the next poll: "
                          + "; ".join(failed))
    return WatchReport(checked=len(sources), changed=changed, loaded=loaded, failed=failed, downstream=downstream)


if __name__ == "__main__":
    watch_guidelines()
