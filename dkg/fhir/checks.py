"""What the offline validators cannot check, checked here: the CPG-on-FHIR profile rules the Bundle claims
(the CPG package cannot be loaded offline), that every ``text/cql-identifier`` names a ``define`` of the
library, that every canonical reference resolves inside the Bundle, and that ids are unique."""

from __future__ import annotations

import base64
from collections import Counter
from typing import Any

from dkg.fhir.cql import define_names
from dkg.fhir.export import CPG, PD_TYPE, walk_actions

SHAREABLE = ("url", "version", "name", "status", "experimental", "publisher", "description")
PROFILE_TYPE = {f"{CPG}/cpg-recommendationdefinition": "eca-rule",
                f"{CPG}/cpg-strategydefinition": "workflow-definition"}
SELECTION = {"any", "all", "all-or-none", "exactly-one", "at-most-one", "one-or-more"}


def check_bundle(bundle: dict[str, Any]) -> list[str]:
    """Every problem found, one line each (empty: the Bundle passes)."""
    problems: list[str] = []
    if bundle.get("resourceType") != "Bundle" or bundle.get("type") != "collection":
        problems.append("not a collection Bundle")
    entries = bundle.get("entry", [])
    resources = [e.get("resource", {}) for e in entries]
    keys = Counter(f"{r.get('resourceType')}/{r.get('id')}" for r in resources)
    problems += [f"{k}: id used {n} times" for k, n in keys.items() if n > 1]
    urls = Counter(e.get("fullUrl") for e in entries)
    problems += [f"fullUrl {u} used {n} times" for u, n in urls.items() if n > 1]
    canon = {f"{r.get('url')}|{r.get('version')}": r for r in resources if r.get("url")}
    defines: dict[str, set[str]] = {}
    for r in resources:
        if r.get("resourceType") == "Library":
            for c in r.get("content", []):
                if c.get("contentType") == "text/cql":
                    defines[f"{r.get('url')}|{r.get('version')}"] = define_names(
                        base64.b64decode(c["data"]).decode("utf-8"))
    for r in resources:
        where = f"{r.get('resourceType')}/{r.get('id')}"
        if r.get("resourceType") in ("PlanDefinition", "ActivityDefinition", "Library"):
            problems += [f"{where}: shareable artifact without {f}" for f in SHAREABLE if r.get(f) in (None, "")]
            name = str(r.get("name", ""))
            if name and not (name[0].isupper() and name.replace("_", "").isalnum()):
                problems.append(f"{where}: name {name!r} is not a computable name")
        if r.get("resourceType") == "Library":
            lib_type = [c.get("code") for c in r.get("type", {}).get("coding", [])]
            if "logic-library" not in lib_type:
                problems.append(f"{where}: Library type is not logic-library")
        if r.get("resourceType") != "PlanDefinition":
            continue
        problems += _check_plan(r, where, canon, defines)
    return problems


def _check_plan(r: dict[str, Any], where: str, canon: dict[str, Any], defines: dict[str, set[str]]) -> list[str]:
    problems: list[str] = []
    profiles = r.get("meta", {}).get("profile", [])
    codes = [(c.get("system"), c.get("code")) for c in r.get("type", {}).get("coding", [])]
    for p in profiles:
        want = PROFILE_TYPE.get(p)
        if want and (PD_TYPE, want) not in codes:
            problems.append(f"{where}: {p.rsplit('/', 1)[-1]} needs type {want}")
    if not r.get("action"):
        problems.append(f"{where}: a computable PlanDefinition needs at least one action")
    libs = r.get("library", [])
    if len(libs) > 1:
        problems.append(f"{where}: more than one library")
    for lib in libs:
        if lib not in canon:
            problems.append(f"{where}: library {lib} is not in the Bundle")
    lib_defines = set().union(*(defines.get(lib, set()) for lib in libs)) if libs else set()
    strategy = f"{CPG}/cpg-strategydefinition" in profiles
    ids = Counter(a.get("id") for a in walk_actions(r.get("action", [])))
    problems += [f"{where}: action id {i!r} used {n} times" for i, n in ids.items() if n > 1]
    for a in walk_actions(r.get("action", [])):
        aw = f"{where} action {a.get('id')}"
        for cond in a.get("condition", []):
            expr = cond.get("expression", {})
            if cond.get("kind") != "applicability":
                problems.append(f"{aw}: condition kind {cond.get('kind')!r}")
            if expr.get("language") not in ("text/cql", "text/cql-identifier"):
                problems.append(f"{aw}: condition language {expr.get('language')!r}")
            elif expr.get("expression") not in lib_defines:
                problems.append(f"{aw}: no define {expr.get('expression')!r} in the library")
        target = a.get("definitionCanonical")
        if target is not None:
            if target not in canon:
                problems.append(f"{aw}: definitionCanonical {target} is not in the Bundle")
            elif strategy and canon[target].get("resourceType") != "PlanDefinition":
                problems.append(f"{aw}: a strategy's action must point to a PlanDefinition")
        for rel in a.get("relatedAction", []):
            if rel.get("actionId") not in ids:
                problems.append(f"{aw}: relatedAction {rel.get('actionId')!r} is not an action of {where}")
        sel = a.get("selectionBehavior")
        if sel is not None and sel not in SELECTION:
            problems.append(f"{aw}: selectionBehavior {sel!r}")
        if strategy and not all(a.get(f) for f in ("title", "description", "code")):
            problems.append(f"{aw}: a strategy's action needs title, description and code")
    return problems
