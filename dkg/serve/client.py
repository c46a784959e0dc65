"""How the CLI finds and asks a running ``dkg serve`` (standard library only: it must import fast)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from dkg.settings import Settings


def pid_file(settings: Settings) -> Path:
    """Where a running service records its URL and process id."""
    return settings.state_path / "run" / "serve.json"


def write_pid_file(settings: Settings, url: str) -> Path:
    path = pid_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"url": url, "pid": os.getpid()}), encoding="utf-8")
    return path


def served_url(settings: Settings) -> str | None:
    """``DKG_SERVE_URL``, else the URL of a live service of this state folder, else None."""
    explicit = os.environ.get("DKG_SERVE_URL", "").strip()
    if explicit:
        return explicit.rstrip("/")
    path = pid_file(settings)
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return str(info["url"]).rstrip("/")


def post_json(settings: Settings, url: str, body: dict[str, Any], timeout: float = 60.0) -> dict[str, Any] | None:
    """POST ``body``; the JSON answer, or None when the service cannot be reached or refuses (the caller
    then answers locally)."""
    headers = {"content-type": "application/json"}
    keys = settings.api_keys.get_secret_value() if settings.api_keys else ""
    if keys.strip():
        headers["x-api-key"] = keys.split(",")[0].strip()
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # a configured local service
            value = json.loads(resp.read())
    except urllib.error.HTTPError as e:  # 422 carries a rejected answer; other refusals: answer locally
        try:
            value = json.loads(e.read()) if e.code == 422 else None
        except ValueError:
            value = None
        if not isinstance(value, dict) or "status" not in value:
            return None
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None
