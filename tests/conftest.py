"""Shared fixtures: settings, the real services, and one Prefect test harness per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

# Prefect reads these when it is imported; set them before any test module imports it.
os.environ.setdefault("PREFECT_HOME", str(ROOT / ".dkg" / "prefect-tests"))
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("NO_PROXY", "localhost,127.0.0.1")
# new attributes are approved without a pause unless a test asks for the pause (tests/flows/test_new_guideline.py)
os.environ.setdefault("DKG_AUTO_APPROVE_ATTRIBUTES", "1")

from dkg.services import services_up  # noqa: E402
from dkg.settings import Settings, load_settings  # noqa: E402


@pytest.fixture(scope="session")
def settings() -> Settings:
    """The settings the suite runs with (state folder of the checkout, default ports)."""
    return load_settings(state_dir=ROOT / ".dkg")


@pytest.fixture(scope="session")
def services(settings: Settings) -> Settings:
    """Ensure Neo4j and CoreNLP are up (idempotent: `make test` has started them already)."""
    statuses = services_up(settings)
    assert all(s.healthy for s in statuses), [s.detail for s in statuses]
    return settings


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One temporary Prefect API for the whole session (its start-up takes ~20 s)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield


@pytest.fixture(scope="session")
def trained_qa(services: Settings, prefect_harness: None, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[tuple[Settings, object]]:
    """A QA dataset from the graph (version 2 of each reference guideline) and the small model trained and
    promoted on it, in a QA folder of the session: built once, used by tests/flows/test_text2cypher.py and
    then by the service tests that run right after it (tests/flows/test_text2cypher_served.py).

    Yields the settings of that QA folder and the training report. DKG_QA_DIR points at it only while
    training; a test module that needs it in the environment sets it for itself."""
    from dkg.graph import loader
    from flows.build_qa_dataset import build_qa_dataset
    from flows.train_text2cypher import train_text2cypher

    reuse = os.environ.get("DKG_TEST_QA_DIR")  # iterating on the service tests only: a QA folder trained before
    if reuse:
        yield load_settings(state_dir=services.state_path, qa_dir=Path(reuse)), None
        return
    from flows.build_dkg import build_dkg
    from tests.pdf_support import reference_pdfs

    # tests/flows/test_pipeline_chain.py leaves version 2 of BONE and KID loaded; what is missing is built here
    loaded = {g["code"]: g["version"] for g in loader.guidelines(services)}
    for pdf in sorted(reference_pdfs()):
        code, _, version = pdf.stem.partition("-")
        if version.startswith("2.") and loaded.get(code) != version:
            result = build_dkg(str(pdf), str(tmp_path_factory.mktemp("build") / code))
            assert result.loaded, (pdf, result)
    loaded = {g["code"]: g["version"] for g in loader.guidelines(services)}
    assert all(str(loaded.get(c, "")).startswith("2.") for c in ("ALL", "KID", "BONE")), loaded
    qa_dir = tmp_path_factory.mktemp("t2c") / "qa"
    old = os.environ.get("DKG_QA_DIR")
    os.environ["DKG_QA_DIR"] = str(qa_dir)
    try:
        build_qa_dataset(fresh=True)
        # the baseline only has to be measured and found worse: 3 epochs instead of the size's 8 (~80 s less)
        report = train_text2cypher(size="small", with_baseline=True, baseline_epochs=3)
    finally:
        if old is None:
            os.environ.pop("DKG_QA_DIR", None)
        else:
            os.environ["DKG_QA_DIR"] = old
    yield load_settings(state_dir=services.state_path, qa_dir=qa_dir), report


# --- kernel log: no process of the run may segfault (a crash in a child or a Dask worker kills no test) ----
_CRASH_WORDS = ("segfault", "general protection fault", "traps:")


def _kernel_log() -> list[str] | None:
    """The kernel ring buffer, or None where it cannot be read (no dmesg, or not permitted)."""
    import subprocess

    try:
        out = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.splitlines() if out.returncode == 0 else None


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_KERNEL_LOG] = _kernel_log()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_KERNEL_LOG, None)
    after = _kernel_log()
    report = ROOT / ".dkg" / "faults" / "kernel-log.txt"
    report.parent.mkdir(parents=True, exist_ok=True)
    if before is None or after is None:
        report.write_text("kernel log not readable: segfault check not done\n", encoding="utf-8")
        return
    seen = set(before)
    crashes = [line for line in after if line not in seen and any(w in line for w in _CRASH_WORDS)]
    report.write_text(f"{len(after) - len(before)} new kernel log lines during the run; crashes: {len(crashes)}\n"
                      + "".join(f"{line}\n" for line in crashes), encoding="utf-8")
    if crashes:
        print("\nkernel log: a process crashed during the test run:\n" + "\n".join(crashes[:20]))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_KERNEL_LOG = pytest.StashKey[list[str] | None]()
