"""Local services the platform starts itself: Neo4j (embedded, Bolt) and Stanford CoreNLP."""

from dkg.services.manager import services_down, services_status, services_up
from dkg.services.status import ServiceStatus

__all__ = ["ServiceStatus", "services_down", "services_status", "services_up"]
