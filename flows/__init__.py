"""Prefect flows: composition of tasks, one deployable flow per file."""
