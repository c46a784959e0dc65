"""Entry point of the ``dkg`` command: the root app with every command module's commands registered.

One module per command group (``dkg_cli/<group>.py``), so that a group's reference page and its code match;
printing goes through :mod:`dkg_cli.output`.
"""

from __future__ import annotations

import sys

from dkg.errors import DkgError
from dkg_cli import (  # noqa: F401 (register)
    cluster,
    demo,
    evaluate,
    export,
    graph,
    ingest,
    qa,
    serve,
    services,
    vocab,
    web,
)
from dkg_cli.app import app
from dkg_cli.output import err, state

__all__ = ["app", "main"]


def main() -> None:
    """Run the CLI; a :class:`DkgError` becomes one line on stderr and exit code 1."""
    try:
        app()
    except DkgError as e:
        if state["debug"]:
            raise
        err.print(f"[red]error:[/] {e}", highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
