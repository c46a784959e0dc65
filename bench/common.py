"""A benchmark row: a measure beside a baseline measured in the same run."""

from __future__ import annotations

import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One line of the benchmark table."""

    measure: str
    value: float
    baseline_name: str
    baseline: float
    unit: str

    @property
    def ratio(self) -> float:
        """value / baseline (how many baselines the measure costs, or is worth)."""
        return self.value / self.baseline if self.baseline else float("nan")


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
