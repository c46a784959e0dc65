"""Every command of the CLI answers --help."""

from __future__ import annotations

import typer
from typer.main import get_command
from typer.testing import CliRunner

from dkg_cli.main import app


def _paths(group: typer.core.TyperGroup, prefix: list[str]) -> list[list[str]]:
    paths = [prefix]
    for name, cmd in group.commands.items():
        if isinstance(cmd, typer.core.TyperGroup):
            paths += _paths(cmd, [*prefix, name])
        else:
            paths.append([*prefix, name])
    return paths


def test_every_command_has_help() -> None:
    root = get_command(app)
    assert isinstance(root, typer.core.TyperGroup)
    paths = _paths(root, [])
    assert ["services", "up"] in paths and ["health"] in paths
    runner = CliRunner()
    for path in paths:
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Usage" in result.output, path
