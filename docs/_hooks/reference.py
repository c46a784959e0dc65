"""MkDocs hook: the reference pages generated from the code at build time, never copied into docs/.

- ``reference/cli.md`` from the Typer app (every command and option, in the module that defines it);
- ``reference/settings.md`` from the settings model (every field, its environment variables and default);
- ``reference/http-api.md`` from the service's OpenAPI schema (every route, its parameters and responses);
- ``reference/deployments.md`` from ``prefect.yaml`` (every deployment, schedule, trigger and parameter);
- ``reference/graph-schema-statements.md`` from the graph layer's schema statements;
- ``reference/qa-item.md`` from the QA item model.

A page that fails to generate fails the build (``mkdocs build --strict``).
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _cell(text: object) -> str:
    return " ".join(str(text if text is not None else "").split()).replace("|", "\\|")


def _param_type(p: Any) -> str:
    """A command parameter's Python type as written in its annotation (Typer keeps it on the parameter)."""
    if getattr(p, "is_flag", False):
        return "flag"
    ann = getattr(getattr(p, "type_descriptor", None), "annotation", None)
    if ann is None:
        return str(getattr(getattr(p, "type", None), "name", ""))
    text = ann.__name__ if isinstance(ann, type) else str(ann)
    return text.replace("pathlib.", "").replace("typing.", "")


def cli_page() -> str:
    """Every command of ``dkg``: usage, help, options and arguments, and the module that holds it."""
    from typer.main import get_command

    from dkg_cli.main import app

    root = get_command(app)
    lines = ["# Command line (`dkg`)", "",
             "Generated from the Typer application (`dkg_cli/`, one module per command group) when the site is "
             "built. Every command also answers `--help`.", ""]

    def walk(cmd: Any, path: list[str]) -> None:  # Typer's own click: groups have commands, params a kind
        if hasattr(cmd, "commands"):
            names = list(cmd.commands)
            if path:
                lines.extend([f"{'#' * min(len(path) + 1, 4)} `dkg {' '.join(path)}`", "",
                              _cell(cmd.help), ""])
            for name in names:
                walk(cmd.commands[name], [*path, name])
            return
        module = inspect.getmodule(cmd.callback).__name__ if cmd.callback else ""  # type: ignore[union-attr]
        lines.extend([f"{'#' * min(len(path) + 1, 4)} `dkg {' '.join(path)}`", ""])
        help_text = inspect.cleandoc(cmd.help or "")
        lines.extend([help_text, "", f"*Module:* `{module}`", ""])
        args = [p for p in cmd.params if p.param_type_name == "argument"]
        opts = [p for p in cmd.params if p.param_type_name == "option"]
        usage = " ".join([f"dkg {' '.join(path)}", *(f"{a.name.upper()}{'...' if a.nargs == -1 else ''}"
                                                     for a in args if a.name), "[OPTIONS]" if opts else ""])
        lines.extend(["```text", usage.strip(), "```", ""])
        if args or opts:
            lines.extend(["| parameter | type | default | meaning |", "|---|---|---|---|"])
            for a in args:
                lines.append(f"| `{(a.name or '').upper()}` | {_cell(_param_type(a))} | "
                             f"{'required' if a.required else _cell(a.default)} | "
                             f"{_cell(getattr(a, 'help', ''))} |")
            for o in opts:
                flags = " / ".join(f"`{n}`" for n in [*o.opts, *o.secondary_opts])
                default = "" if o.is_flag and not o.default else _cell(o.default)
                lines.append(f"| {flags} | {_cell(_param_type(o))} | {default} | "
                             f"{_cell(o.help)} |")
            lines.append("")

    walk(root, [])
    return "\n".join(lines) + "\n"


def settings_page() -> str:
    """Every setting: the environment variables that set it, its type, default and meaning."""
    from pydantic import AliasChoices

    from dkg.settings import Settings

    prefix = str(Settings.model_config.get("env_prefix", ""))
    lines = ["# Settings and environment variables", "",
             f"Generated from `dkg.settings.Settings` when the site is built. Each setting is read from the "
             f"environment (prefix `{prefix}`) or from a `.env` file; secrets are never printed, logged or kept "
             "in artifacts.", "", "| environment variable | type | default | meaning |", "|---|---|---|---|"]
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        envs = ([str(c) for c in alias.choices] if isinstance(alias, AliasChoices)
                else [str(alias)] if alias else [f"{prefix}{name}".upper()])
        ann = field.annotation
        typ = getattr(ann, "__name__", None) or str(ann).replace("typing.", "")
        default = "(secret)" if "SecretStr" in str(ann) else field.default
        lines.append(f"| {' / '.join(f'`{e}`' for e in envs)} | {_cell(typ)} | {_cell(default)} | "
                     f"{_cell(field.description)} |")
    return "\n".join(lines) + "\n"


def api_page() -> str:
    """Every route of ``dkg serve``: method, path, summary, parameters and responses (from its OpenAPI schema)."""
    from dkg.serve.app import create_app
    from dkg.settings import Settings

    schema: dict[str, Any] = create_app(Settings(), start=False).openapi()
    lines = ["# HTTP API (`dkg serve`)", "",
             f"Generated from the service's OpenAPI schema ({schema['info']['title']} {schema['info']['version']}) "
             "when the site is built; a running service serves the same schema at `/openapi.json` and an "
             "interactive page at `/docs`.", ""]
    for path, ops in schema.get("paths", {}).items():
        for method, op in ops.items():
            lines.extend([f"## `{method.upper()} {path}`", "", _cell(op.get("summary")), ""])
            if op.get("description"):
                lines.extend([inspect.cleandoc(op["description"]), ""])
            params = op.get("parameters", [])
            if params:
                lines.extend(["| parameter | in | required | type |", "|---|---|---|---|"])
                for p in params:
                    typ = p.get("schema", {}).get("type") or p.get("schema", {}).get("anyOf", "")
                    lines.append(f"| `{p['name']}` | {p['in']} | {p.get('required', False)} | {_cell(typ)} |")
                lines.append("")
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body:
                lines.extend([f"Request body: `{body.get('$ref', '').rsplit('/', 1)[-1] or body.get('type')}`", ""])
            codes = ", ".join(f"{c} ({_cell(r.get('description'))})" for c, r in op.get("responses", {}).items())
            lines.extend([f"Responses: {codes}", ""])
    models = schema.get("components", {}).get("schemas", {})
    if models:
        lines.extend(["## Models", ""])
        for name, m in models.items():
            lines.extend([f"### `{name}`", "", _cell(m.get("description")), "",
                          "| field | type | required |", "|---|---|---|"])
            for f, spec in m.get("properties", {}).items():
                typ = spec.get("type") or spec.get("$ref", "").rsplit("/", 1)[-1] or "any"
                lines.append(f"| `{f}` | {_cell(typ)} | {f in m.get('required', [])} |")
            lines.append("")
    return "\n".join(lines) + "\n"


def deployments_page() -> str:
    """Every Prefect deployment of ``prefect.yaml``: flow, schedules, triggers, parameters, concurrency."""
    import yaml

    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    lines = ["# Prefect deployments", "",
             "Generated from `prefect.yaml` when the site is built (`prefect deploy --all` registers them; "
             "`dkg cluster up` does it for you).", ""]
    for d in spec.get("deployments", []):
        lines.extend([f"## `{d['name']}`", "", _cell(d.get("description")), "",
                      f"- flow: `{d.get('entrypoint')}`",
                      f"- work pool: `{(d.get('work_pool') or {}).get('name', '')}`",
                      f"- tags: {', '.join(f'`{t}`' for t in d.get('tags', []))}"])
        for s in d.get("schedules") or []:
            when = f"every {s['interval']} s" if "interval" in s else f"cron `{s.get('cron')}` {s.get('timezone', '')}"
            lines.append(f"- schedule: {when}{'' if s.get('active', True) else ' (inactive)'}")
        for t in d.get("triggers") or []:
            lines.append(f"- trigger: `{json.dumps(t, sort_keys=True)}`")
        if d.get("concurrency_limit"):
            lines.append(f"- concurrency limit: `{json.dumps(d['concurrency_limit'])}`")
        params = d.get("parameters") or {}
        if params:
            lines.append("- parameters: " + ", ".join(f"`{k}` = `{json.dumps(v)}`" for k, v in params.items()))
        lines.append("")
    return "\n".join(lines) + "\n"


def graph_statements_page() -> str:
    """The schema statements the loader runs before every load, from ``dkg.graph.queries``."""
    from dkg.graph import queries

    lines = ["# Graph schema statements", "",
             "Generated from `dkg.graph.queries.SCHEMA` when the site is built: the constraints and indexes the "
             "loader creates (idempotently) before every load. The model itself is described in "
             "[the graph schema](../graph-schema.md).", "", "```cypher", *queries.SCHEMA, "```", ""]
    return "\n".join(lines)


def qa_item_page() -> str:
    """The fields of one QA item, from the model that validates every exported item."""
    from dkg.qa.dataset import QAItem

    lines = ["# QA item fields", "",
             "Generated from `dkg.qa.dataset.QAItem` when the site is built; every item of an exported dataset is "
             "validated against it. The format and its files are described in [the QA dataset](../qa-dataset.md).",
             "", "| field | type | required | meaning |", "|---|---|---|---|"]
    for name, field in QAItem.model_fields.items():
        ann = field.annotation
        typ = getattr(ann, "__name__", None) or str(ann).replace("typing.", "")
        lines.append(f"| `{name}` | {_cell(typ)} | {field.is_required()} | {_cell(field.description)} |")
    return "\n".join(lines) + "\n"


PAGES = {"reference/cli.md": cli_page, "reference/settings.md": settings_page, "reference/http-api.md": api_page,
         "reference/deployments.md": deployments_page, "reference/graph-schema-statements.md": graph_statements_page,
         "reference/qa-item.md": qa_item_page}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for uri, make in PAGES.items():
        files.append(File.generated(config, uri, content=make()))
    return files
