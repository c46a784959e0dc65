"""`dkg serve`: the HTTP API and the clinician page."""

from __future__ import annotations

from typing import Annotated

import typer

from dkg.settings import load_settings
from dkg_cli.app import app
from dkg_cli.output import out


@app.command("serve")
def serve_cmd(
    host: Annotated[str, typer.Option("--host", help="Address to listen on (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8080,
) -> None:
    """Answer over HTTP (/v1/ask, /v1/web/ask, /v1/guidelines, /docs) with a web page for clinicians at /."""
    from dkg.serve.app import serve

    settings = load_settings()
    out.print(f"dkg serve: http://{host}:{port}/ (API docs at /docs); Ctrl-C stops it", highlight=False)
    serve(settings, host, port)

