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


class ConstraintError(DkgError):
    """An edge CSV cannot be turned into a constraint CSV (missing columns, bad encoding)."""


class DataValidationError(DkgError):
    """A CSV failed its Great Expectations suite; it was quarantined and nothing was loaded.

    Attributes:
        result_path: where the full validation result was written.
        quarantined: where the rejected file now lies.
    """

    def __init__(self, message: str, result_path: str | None = None, quarantined: str | None = None) -> None:
        super().__init__(message)
        self.result_path = result_path
        self.quarantined = quarantined


class GraphLoadError(DkgError):
    """A constraint CSV cannot be loaded into the graph (unvalidated, inconsistent, write failed)."""


class ModelError(DkgError):
    """A text-to-Cypher model is missing, corrupt or cannot be trained."""


class UnsafeCypherError(DkgError):
    """Generated Cypher failed a check (syntax, read-only, literal values) and was not run."""


class StorageError(DkgError):
    """A result could not be written (disk full, read-only folder); nothing partial was left behind."""


class ExportError(DkgError):
    """A guideline version could not be exported (FHIR, CQL) or its export failed validation."""
