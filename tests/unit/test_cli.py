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


def test_one_module_per_command_group() -> None:
    """Each group's commands live in their own module (its reference page and its code match), none over 300
    lines; a command module prints through dkg_cli.output, never through a console of its own."""
    import inspect
    from pathlib import Path

    root = get_command(app)
    assert isinstance(root, typer.core.TyperGroup)
    cli = Path(__file__).resolve().parents[2] / "dkg_cli"
    sizes = {p.name: len(p.read_text().splitlines()) for p in cli.glob("*.py")}
    assert all(n <= 300 for n in sizes.values()), sizes
    for name in ("graph", "qa", "web", "vocab", "cluster", "services", "eval"):
        group = root.commands[name]
        assert isinstance(group, typer.core.TyperGroup)
        modules = {inspect.getmodule(c.callback).__name__ for c in group.commands.values()  # type: ignore[union-attr]
                   if c.callback is not None}
        assert len(modules) == 1, (name, modules)
    for p in cli.glob("*.py"):
        if p.name != "output.py":
            assert "Console(" not in p.read_text(), p.name
