"""YAML reading through libyaml when PyYAML was built with it (10x faster than the pure-Python parser).

The question reader loads its vocabulary and rules (several hundred kB of YAML) on every cold
``dkg ask``; with the pure-Python loader that alone took half a second.
"""

from __future__ import annotations

from typing import Any

import yaml

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` with the C loader where available (same result: both are the safe loader)."""
    return yaml.load(text, Loader=_Loader)
