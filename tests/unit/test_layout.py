"""The house rules of the layout: domain code never imports Prefect; flows are deployable."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_domain_package_never_imports_prefect_or_outer_layers() -> None:
    offenders = {
        str(p.relative_to(ROOT)): sorted(_imports(p) & {"prefect", "prefect_dask", "tasks", "flows"})
        for p in (ROOT / "dkg").rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_every_flow_file_is_runnable_as_a_script() -> None:
    for path in (ROOT / "flows").glob("*.py"):
        if path.name == "__init__.py":
            continue
        assert 'if __name__ == "__main__":' in path.read_text(encoding="utf-8"), path


def test_prefect_yaml_entrypoints_import_and_are_flows() -> None:
    from prefect import Flow

    config = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    deployments = config["deployments"]
    assert deployments, "prefect.yaml defines no deployment"
    for dep in deployments:
        file, func = dep["entrypoint"].split(":")
        spec = importlib.util.spec_from_file_location(f"_ep_{func}", ROOT / file)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert isinstance(getattr(module, func), Flow), dep["name"]
        assert dep["work_pool"]["name"], dep["name"]


def _all_flows() -> dict[str, object]:
    """Every flow object defined in flows/, by flow name."""
    import importlib

    from prefect import Flow

    out: dict[str, object] = {}
    for path in sorted((ROOT / "flows").glob("*.py")):
        module = importlib.import_module(f"flows.{path.stem}")
        for value in vars(module).values():
            if isinstance(value, Flow) and value.__module__ == module.__name__:
                out[value.name] = value
    return out


def test_every_flow_is_deployed_in_prefect_yaml_and_served_with_known_parameters() -> None:
    import inspect

    from prefect import Flow

    flows = _all_flows()
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    deployed: set[str] = set()
    for dep in config["deployments"]:
        file, func = dep["entrypoint"].split(":")
        fl = getattr(importlib.import_module(file.removesuffix(".py").replace("/", ".")), func)
        assert isinstance(fl, Flow)
        deployed.add(fl.name)
        known = set(inspect.signature(fl.fn).parameters)
        assert set(dep.get("parameters") or {}) <= known, (dep["name"], set(dep["parameters"]) - known)
        assert dep.get("description") and dep.get("tags"), dep["name"]
    assert deployed == set(flows), set(flows) ^ deployed

    from deployments.serve import build_deployments

    served = build_deployments()
    assert {d.flow_name for d in served} == set(flows)
    watcher = next(d for d in served if d.flow_name == "watch-guidelines")
    assert watcher.parameters.get("full_pipeline") is True and watcher.schedules  # the chain runs on its own
