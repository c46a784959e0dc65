from __future__ import annotations

from dkg.errors import ConfigError, ServiceError, ServiceUnavailableError, is_transient


def test_only_transient_errors_are_retried() -> None:
    assert is_transient(ServiceUnavailableError("down"))
    assert is_transient(ConnectionRefusedError())
    assert is_transient(TimeoutError())
    assert not is_transient(ServiceError("bad credentials"))
    assert not is_transient(ConfigError("no java"))
    assert not is_transient(ValueError("corrupt"))
