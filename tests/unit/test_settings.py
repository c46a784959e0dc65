from __future__ import annotations

from pathlib import Path

import pytest

from dkg.settings import load_settings


def _clear_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defaults are tested without whatever DKG_* / NEO4J_* the shell running the suite has set."""
    import os

    for var in list(os.environ):
        if var.startswith(("DKG_", "NEO4J_")):
            monkeypatch.delenv(var, raising=False)


def test_defaults_point_at_local_services(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    _clear_env(monkeypatch)
    s = load_settings()
    assert s.bolt_uri == "bolt://127.0.0.1:7687"
    assert s.corenlp_endpoint == "http://127.0.0.1:9000"
    assert not s.uses_external_neo4j
    assert s.state_path == (tmp_path / ".dkg").resolve()


def test_neo4j_uri_env_selects_external_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "neo4j://db.internal:7688")
    monkeypatch.setenv("NEO4J_USERNAME", "alice")
    monkeypatch.setenv("NEO4J_PASSWORD", "hunter2")
    monkeypatch.setenv("NEO4J_DATABASE", "cpg")
    s = load_settings()
    assert s.uses_external_neo4j
    assert s.bolt_uri == "neo4j://db.internal:7688"
    assert (s.neo4j_username, s.neo4j_database) == ("alice", "cpg")
    assert s.neo4j_password is not None and s.neo4j_password.get_secret_value() == "hunter2"
    # The secret never shows in a repr, a dump or a JSON dump.
    assert "hunter2" not in repr(s)
    assert "hunter2" not in s.model_dump_json()


def test_blank_uri_means_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "  ")
    assert load_settings().neo4j_uri is None


def test_dotenv_file_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    _clear_env(monkeypatch)
    (tmp_path / ".env").write_text("DKG_NEO4J_PORT=7777\nDKG_CORENLP_PORT=9999\n")
    s = load_settings()
    assert (s.neo4j_port, s.corenlp_port) == (7777, 9999)


def test_invalid_port_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DKG_NEO4J_PORT", "70000")
    with pytest.raises(ValueError, match="neo4j_port"):
        load_settings()


def test_transaction_log_retention_is_checked_before_neo4j_sees_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear_env(monkeypatch)
    assert load_settings().neo4j_tx_log_retention == "512M size"
    for good in ("2 files", "1G size", "7 days", "false"):
        monkeypatch.setenv("DKG_NEO4J_TX_LOG_RETENTION", good)
        assert load_settings().neo4j_tx_log_retention == good
    for bad in ("lots", "512M", "1 G size", "2 days; rm -rf /"):
        monkeypatch.setenv("DKG_NEO4J_TX_LOG_RETENTION", bad)
        with pytest.raises(ValueError, match="neo4j_tx_log_retention"):
            load_settings()


def test_current_settings_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from dkg.settings import current_settings

    monkeypatch.setenv("DKG_OCR_CACHE", "false")
    first = current_settings()
    assert first.ocr_cache is False and current_settings() is first  # read once for one environment
    monkeypatch.setenv("DKG_OCR_CACHE", "true")
    assert current_settings().ocr_cache is True  # a changed variable is seen at the next call
