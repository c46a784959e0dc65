"""The documentation site builds with --strict, and its generated reference covers every command, setting, route
and deployment; the README stays a landing page."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.pdf_support import ROOT

# the site's hook: the pages it generates are what is checked here
_spec = importlib.util.spec_from_file_location("docs_reference_hook", ROOT / "docs" / "_hooks" / "reference.py")
assert _spec is not None and _spec.loader is not None
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


def test_the_site_builds_strict(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "-d", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for page in ("index.html", "tutorial/index.html", "reference/cli/index.html", "reference/python/index.html",
                 "howto/failed-run/index.html"):
        assert (tmp_path / page).exists(), page


def test_every_command_is_in_the_cli_reference() -> None:
    from typing import Any

    from typer.main import get_command

    from dkg_cli.main import app

    page = reference.cli_page()

    def paths(cmd: Any, path: list[str]) -> list[list[str]]:
        if hasattr(cmd, "commands"):
            return [p for name, sub in cmd.commands.items() for p in paths(sub, [*path, name])]
        return [path]

    every = paths(get_command(app), [])
    assert len(every) >= 30
    for p in every:
        assert f"`dkg {' '.join(p)}`" in page, p
    assert "`--naming-blind`" in page and "`--json`" in page


def test_every_setting_and_route_and_deployment_is_in_the_reference() -> None:
    from dkg.settings import Settings

    settings = reference.settings_page()
    for name in Settings.model_fields:
        assert f"DKG_{name.upper()}" in settings, name
    assert "`NEO4J_URI`" in settings and "(secret)" in settings
    api = reference.api_page()
    for route in ("POST /v1/ask", "POST /v1/web/ask", "GET /v1/guidelines", "GET /v1/health", "GET /v1/attributes"):
        assert f"`{route}" in api, route
    deployments = reference.deployments_page()
    for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]:
        assert f"## `{d['name']}`" in deployments, d["name"]


def test_the_readme_is_a_landing_page() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    top = "\n".join(text.splitlines()[:25])
    assert "make demo" in top and "make test" in top  # the two commands open it
    for target in ("docs/tutorial.md", "make docs", "docs/howto/", "docs/concepts/"):
        assert target in text, target


@pytest.mark.parametrize("page", sorted(p.relative_to(ROOT / "docs").as_posix()
                                        for p in (ROOT / "docs").rglob("*.md")))
def test_every_page_is_in_the_navigation(page: str) -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    assert page in nav or page.startswith(("reference/cli", "_hooks")), page
