"""Prefect tasks: thin wrappers around ``dkg`` with retries, caching, logging and artifacts."""
