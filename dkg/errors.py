"""Exception hierarchy: one root, one subclass per stage, and a marker for transient errors."""

from __future__ import annotations


class DkgError(Exception):
    """Root of every error this platform raises on purpose.

    The command line turns it into one clear line and a non-zero exit.
    """


class TransientError(DkgError):
    """Marker: the operation may succeed if retried (service not answering, network)."""


class ConfigError(DkgError):
    """Invalid or missing configuration (settings, tools on the PATH)."""


class ServiceError(DkgError):
    """A local service could not be fetched, started, reached or stopped."""


class ServiceUnavailableError(ServiceError, TransientError):
    """A service did not answer; retrying later may help."""


def is_transient(exc: BaseException) -> bool:
    """Tell whether ``exc`` is worth a retry.

    Args:
        exc: the exception raised by an attempt.

    Returns:
        True for :class:`TransientError` and plain connection/timeout errors.
    """
    return isinstance(exc, (TransientError, ConnectionError, TimeoutError))


class IngestError(DkgError):
    """A guideline document cannot be read (missing, empty, encrypted, corrupt, bad page)."""
