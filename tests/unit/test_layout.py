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
