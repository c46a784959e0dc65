"""Validated synthetic guidelines (decision → action pairs) for load faults: big enough that a
load takes seconds, small enough to build in a test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dkg.constraints.table import write_rows
from dkg.constraints.vocabulary import load_vocabulary
from dkg.graph import loader
from dkg.services import neo4j
from dkg.settings import Settings
from dkg.validate import validate_constraint_csv


def synthetic_csv(folder: Path, code: str, version: str, pairs: int, age_shift: int = 0) -> Path:
    """A constraint CSV that passed the GX gate: ``pairs`` age decisions each leading to a treatment."""
    rows = []
    for i in range(pairs):
        age = (i + age_shift) % 90
        head = f"Patients aged {age} years or older, group {i}"
        tail = f"Treatment {i}"
        rows.append({
            "guideline": code, "version": version, "kind": "arrow", "head_id": f"s{i}_a", "tail_id": f"s{i}_b",
            "head": head, "tail": tail, "head_plain": head, "tail_plain": tail,
            "head_page": f"{code}-{i // 50 + 1}", "tail_page": f"{code}-{i // 50 + 1}", "label": "",
            "source_pdf_sha256": f"{version}-{pairs}-{age_shift}".ljust(64, "0")[:64],
            "head_constraints": json.dumps([{"attr": "age", "op": ">=", "value": age, "unit": "years"}]),
            "tail_constraints": "[]", "head_kind": "condition", "tail_kind": "action",
        })
    path = folder / "constraints.csv"
    write_rows(rows, path)
    validate_constraint_csv(path, folder, load_vocabulary(), folder / "quarantine", None)
    return path


def dump(settings: Settings, code: str) -> dict[str, Any]:
    """Everything the graph holds for ``code`` (load times left out), in a comparable form."""
    def rows(query: str) -> list[Any]:
        with neo4j.open_driver(settings) as driver:
            records, _, _ = driver.execute_query(query, code=code, database_=settings.neo4j_database)
        return sorted(json.dumps(r.data(), sort_keys=True, default=str) for r in records)

    return {
        "versions": [(v["version"], v["seq"], v["kind"]) for v in loader.versions(settings, code)],
        "boxes": rows("MATCH (b:Box {code: $code}) RETURN b.uid AS uid, b.text AS text, "
                      "b.constraints AS c, b.retired AS retired, b.kind AS kind"),
        "arrows": rows("MATCH (h:Box {code: $code})-[r]->(t:Box) RETURN h.uid AS h, type(r) AS r, t.uid AS t, "
                       "h.retired AS hr"),
        "decisions": rows("MATCH (d:Decision {code: $code}) RETURN d.uid AS uid, properties(d) AS p"),
        "changes": rows("MATCH (c:Change {code: $code}) RETURN c.version AS v, c.seq AS seq, c.uid AS uid, "
                        "c.op AS op, c.field AS f, c.old AS o, c.new AS n"),
        "paths": rows("MATCH (p:Path {code: $code}) RETURN properties(p) AS p"),
    }


def wipe(settings: Settings, code: str) -> None:
    with neo4j.open_driver(settings) as driver:
        driver.execute_query("MATCH (n) WHERE n.code = $code DETACH DELETE n", code=code,
                             database_=settings.neo4j_database)
