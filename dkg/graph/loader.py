"""Load a guideline version: compute the difference to the graph, apply only it, in one transaction."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import neo4j
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable, SessionExpired
from pydantic import BaseModel, Field

from dkg.constraints.vocabulary import load_vocabulary
from dkg.errors import GraphLoadError, ServiceUnavailableError
from dkg.graph import queries as q
from dkg.graph.model import BoxState, EdgeState, VersionState, _camel, decision_rows, read_version, row
from dkg.graph.paths import decision_paths
from dkg.services.neo4j import open_driver
from dkg.settings import Settings


class BoxChange(BaseModel):
    """One box in a diff, with its old and new text and constraints."""

    uid: str
    page: str
    text_before: str | None = None
    text_after: str | None = None
    constraints_before: Any = None
    constraints_after: Any = None


class GraphDiff(BaseModel):
    """What a new version changes, box by box, and which decisions lead elsewhere now."""

    code: str
    from_version: str | None
    to_version: str
    changed: list[BoxChange] = Field(default_factory=list)
    added: list[BoxChange] = Field(default_factory=list)
    removed: list[BoxChange] = Field(default_factory=list)
    edges_added: list[dict[str, str]] = Field(default_factory=list)
    edges_removed: list[dict[str, str]] = Field(default_factory=list)
    changed_paths: list[dict[str, Any]] = Field(default_factory=list)
    """Decision paths whose recommendation changed: which patients now get a different answer."""

    @property
    def empty(self) -> bool:
        return not (self.changed or self.added or self.removed or self.edges_added or self.edges_removed)


class LoadReport(BaseModel):
    """Outcome of a load."""

    code: str
    version: str
    loaded: bool
    message: str
    diff: GraphDiff
    writes: dict[str, int] = Field(default_factory=dict)


def _run_read(settings: Settings, query: str, **params: Any) -> list[dict[str, Any]]:
    try:
        with open_driver(settings) as driver:
            records, _, _ = driver.execute_query(query, params, database_=settings.neo4j_database,
                                                 routing_=neo4j.RoutingControl.READ)
            return [r.data() for r in records]
    except AuthError as e:
        raise GraphLoadError(f"Neo4j at {settings.bolt_uri} rejected the credentials (check NEO4J_PASSWORD "
                             "or the password file in the state folder)") from e
    except (ServiceUnavailable, OSError) as e:
        raise ServiceUnavailableError(f"Neo4j at {settings.bolt_uri} is not answering") from e


def ensure_schema(settings: Settings) -> None:
    """Create constraints and indexes (idempotent)."""
    with open_driver(settings) as driver:
        for stmt in q.SCHEMA:
            driver.execute_query(stmt, database_=settings.neo4j_database)


def current_state(settings: Settings, code: str) -> VersionState | None:
    """The latest loaded version's snapshot, or None if the guideline is not loaded."""
    rows = _run_read(settings, q.VERSIONS, code=code)
    if not rows:
        return None
    current = [r for r in rows if r["current"]]
    version = (current or rows)[-1]["version"]
    return snapshot(settings, code, version)


def current_states(settings: Settings) -> list[VersionState]:
    """The latest loaded version of every guideline, ordered by code, in one read (``current_state`` of each
    guideline costs two round trips a guideline: 600 for 300 guidelines)."""
    return [VersionState.from_json(r["snapshot"]) for r in _run_read(settings, q.CURRENT_SNAPSHOTS)
            if r["snapshot"]]


def snapshot(settings: Settings, code: str, version: str) -> VersionState | None:
    """The stored snapshot of ``code`` at ``version``."""
    rows = _run_read(settings, q.VERSION_SNAPSHOT, code=code, version=version)
    return VersionState.from_json(rows[0]["snapshot"]) if rows and rows[0]["snapshot"] else None


def compute_diff(old: VersionState | None, new: VersionState) -> GraphDiff:
    """Box-by-box difference between two states of one guideline."""
    diff = GraphDiff(code=new.code, from_version=old.version if old else None, to_version=new.version)
    before = old.boxes if old else {}
    for uid, b in new.boxes.items():
        o = before.get(uid)
        if o is None:
            diff.added.append(BoxChange(uid=uid, page=b.page, text_after=b.textPlain,
                                        constraints_after=json.loads(b.constraints)))
        elif (o.textPlain, o.constraints, o.kind) != (b.textPlain, b.constraints, b.kind):
            diff.changed.append(BoxChange(uid=uid, page=b.page, text_before=o.textPlain, text_after=b.textPlain,
                                          constraints_before=json.loads(o.constraints),
                                          constraints_after=json.loads(b.constraints)))
    for uid, o in before.items():
        if uid not in new.boxes:
            diff.removed.append(BoxChange(uid=uid, page=o.page, text_before=o.textPlain,
                                          constraints_before=json.loads(o.constraints)))
    old_edges = old.edges if old else set()
    diff.edges_added = [row(e) for e in sorted(new.edges - old_edges, key=lambda e: (e.head, e.tail))]
    diff.edges_removed = [row(e) for e in sorted(old_edges - new.edges, key=lambda e: (e.head, e.tail))]
    # Decisions whose constraints changed, or that were added/removed, change who gets which next step.
    nexts: dict[str, list[str]] = {}
    for e in new.edges:
        nexts.setdefault(e.head, []).append(new.boxes[e.tail].textPlain)
    for c in diff.changed + diff.added + diff.removed:
        if c.constraints_before or c.constraints_after:
            diff.changed_paths.append({
                "decision": c.uid, "page": c.page, "condition": c.text_after or c.text_before,
                "constraints_before": c.constraints_before, "constraints_after": c.constraints_after,
                "recommendation": sorted(nexts.get(c.uid, [])),
            })
    return diff


def _current_in(tx: neo4j.ManagedTransaction, code: str) -> VersionState | None:
    """``current_state`` read inside a transaction (after the guideline's lock is held)."""
    rows = [r.data() for r in tx.run(q.VERSIONS, code=code)]
    if not rows:
        return None
    current = [r for r in rows if r["current"]]
    version = (current or rows)[-1]["version"]
    rec = tx.run(q.VERSION_SNAPSHOT, code=code, version=version).single()
    return VersionState.from_json(rec["snapshot"]) if rec and rec["snapshot"] else None


def code_of(source: VersionState | Path) -> str:
    """The guideline code of a version state or of a constraint CSV (its first row)."""
    if isinstance(source, VersionState):
        return source.code
    with open(source, encoding="utf-8") as fh:
        first = next(csv.DictReader(fh), None)
    if not first or not first.get("guideline"):
        raise GraphLoadError(f"{source}: row 2 has no guideline code")
    return str(first["guideline"])


def load_version(settings: Settings, source: VersionState | Path, kind: str = "load") -> LoadReport:
    """Apply a version to the graph: only the difference, atomically, recorded as changes.

    ``source`` is the version's state, or its validated constraint CSV: then the state is built
    inside the transaction, its box identities following the version the graph holds at that
    moment. Loads of one guideline are serialised by Neo4j itself: the transaction first takes
    the write lock of the guideline's node and only then reads what is current, so two runs at
    once (two workers, two versions, or the same version twice) end as the same runs one after
    the other would. A version already current is a no-op. A failure (or a kill of the client or
    the server) midway leaves the graph as it was: everything is written in one transaction.

    Raises:
        GraphLoadError: the write failed (the transaction rolled back).
        ServiceUnavailableError: Neo4j does not answer (transient: retried by the task).
    """
    ensure_schema(settings)
    code = code_of(source)
    result: dict[str, Any] = {}

    def work(tx: neo4j.ManagedTransaction) -> None:
        # MERGE + SET takes the node's exclusive lock until commit; the property does not stay.
        tx.run(q.LOCK_GUIDELINE, code=code).consume()
        old = _current_in(tx, code)
        state = source if isinstance(source, VersionState) else read_version(source, old)
        diff = compute_diff(old, state)
        result.update(state=state, diff=diff, writes={})
        if old is not None and old.version == state.version and diff.empty and kind == "load":
            return
        touched = {c.uid for c in diff.changed + diff.added}
        new_boxes = [row(b) for uid, b in state.boxes.items() if uid in touched]
        changed_constraints = {c.uid for c in diff.changed if c.constraints_before != c.constraints_after} | \
            {c.uid for c in diff.added}
        dec_rows, alt_rows = decision_rows([b for u, b in state.boxes.items() if u in changed_constraints])
        no_longer = [c.uid for c in diff.changed if c.constraints_before and not c.constraints_after]
        # a first load records no row per box: its Version's snapshot is the record of what it added
        changes = _change_rows(diff) if old is not None else []
        result["writes"] = {"boxes_written": len(new_boxes), "boxes_retired": len(diff.removed),
                            "decisions_written": len(dec_rows), "edges_added": len(diff.edges_added),
                            "edges_removed": len(diff.edges_removed), "changes_recorded": len(changes)}
        seq = tx.run(q.MERGE_VERSION, code=state.code, name=state.name, version=state.version, sha256=state.sha256,
                     kind=kind, snapshot=state.to_json()).single(strict=True)["seq"]
        first = old is None and tx.run(q.BOXES_OF, code=state.code).single(strict=True)["n"] == 0
        if first:
            _create_all(tx, state, new_boxes, dec_rows, diff)
        else:
            _write_changes(tx, state, new_boxes, dec_rows, no_longer, diff)
        if alt_rows:
            tx.run(q.ADD_ALTERNATIVES, rows=alt_rows).consume()
        # NEXT_STEP of the decisions written now or whose box's arrows changed (not of the whole guideline)
        heads = {e["head"] for e in diff.edges_added + diff.edges_removed}
        if old is None:
            tx.run(q.REFRESH_NEXT_STEPS, code=state.code).consume()
        elif changed_constraints | heads:
            tx.run(q.REFRESH_NEXT_STEPS_OF, uids=sorted(changed_constraints | heads)).consume()
        _write_paths(tx, state)
        if changes:
            tx.run(q.RECORD_CHANGES, code=state.code, version=state.version, seq=seq, rows=changes).consume()
        result["loaded"] = True

    try:
        with open_driver(settings) as driver, driver.session(database=settings.neo4j_database) as session:
            session.execute_write(work)
    except AuthError as e:
        raise GraphLoadError(f"Neo4j at {settings.bolt_uri} rejected the credentials") from e
    except (ServiceUnavailable, SessionExpired, OSError) as e:
        raise ServiceUnavailableError(f"Neo4j at {settings.bolt_uri} is not answering") from e
    except Neo4jError as e:
        raise GraphLoadError(f"loading {code} failed, nothing was written: {e.message}") from e
    state, diff = result["state"], result["diff"]
    if not result.get("loaded"):
        return LoadReport(code=state.code, version=state.version, loaded=False, diff=diff,
                          message=f"{state.code} {state.version} is already loaded; nothing to do")
    verb = "rolled back to" if kind == "rollback" else "loaded"
    return LoadReport(code=state.code, version=state.version, loaded=True, diff=diff, writes=result["writes"],
                      message=f"{verb} {state.code} {state.version}: {len(diff.changed)} changed, "
                              f"{len(diff.added)} added, {len(diff.removed)} removed")


def _create_all(tx: neo4j.ManagedTransaction, state: VersionState, boxes: list[dict[str, Any]],
                decisions: list[dict[str, Any]], diff: GraphDiff) -> None:
    """A first load: every box, decision and edge created, none matched first."""
    if boxes:
        tx.run(q.CREATE_BOXES, rows=boxes, code=state.code, sha256=state.sha256).consume()
    if decisions:
        tx.run(q.CREATE_DECISIONS, rows=decisions, code=state.code).consume()
    for kind, stmt in (("ARROW", q.CREATE_ARROWS), ("LINKS_TO", q.CREATE_LINKS)):
        rows = [e for e in diff.edges_added if e["type"] == kind]
        if rows:
            tx.run(stmt, rows=rows).consume()


def _write_changes(tx: neo4j.ManagedTransaction, state: VersionState, boxes: list[dict[str, Any]],
                   decisions: list[dict[str, Any]], no_longer: list[str], diff: GraphDiff) -> None:
    """An update: what changed merged in, what went retired or removed."""
    if boxes:
        tx.run(q.UPSERT_BOXES, rows=boxes, code=state.code, sha256=state.sha256).consume()
    if diff.removed:
        tx.run(q.REMOVE_DECISIONS, uids=[c.uid for c in diff.removed]).consume()
        tx.run(q.RETIRE_BOXES, uids=[c.uid for c in diff.removed]).consume()
    if no_longer:
        tx.run(q.REMOVE_DECISIONS, uids=no_longer).consume()
    if decisions:
        tx.run(q.SET_DECISIONS, rows=decisions, code=state.code).consume()
    if diff.edges_removed:
        tx.run(q.REMOVE_EDGES, rows=diff.edges_removed).consume()
    if diff.edges_added:
        tx.run(q.ADD_EDGES, rows=diff.edges_added).consume()


def _write_paths(tx: neo4j.ManagedTransaction, state: VersionState) -> int:
    """Bring the guideline's derived decision paths up to date: only the paths that are new, gone or
    different are written (each Path keeps a hash of its properties), so an update that changes a few
    boxes rewrites a few paths. Returns how many paths were written."""
    rows = [p.row() for p in decision_paths(state)]
    for r in rows:
        r["props"]["hash"] = hashlib.sha1(json.dumps(r["props"], sort_keys=True, default=str).encode()).hexdigest()
    have = {r["uid"]: r["hash"] for r in tx.run(q.PATH_HASHES, code=state.code)}
    want = {r["uid"]: r["props"]["hash"] for r in rows}
    stale = [u for u, h in have.items() if want.get(u) != h]
    fresh = [r for r in rows if have.get(r["uid"]) != r["props"]["hash"]]
    if stale:
        tx.run(q.DELETE_PATHS_BY_UID, uids=stale).consume()
    if fresh:
        tx.run(q.CREATE_PATHS, rows=fresh).consume()
    return len(fresh)


def refresh_paths(settings: Settings, code: str) -> int:
    """Recompute the decision paths of the current version (for graphs loaded before paths existed).

    Raises:
        GraphLoadError: the guideline is not loaded.
    """
    state = current_state(settings, code)
    if state is None:
        raise GraphLoadError(f"{code} is not loaded")
    ensure_schema(settings)
    with open_driver(settings) as driver, driver.session(database=settings.neo4j_database) as session:
        return session.execute_write(_write_paths, state)


def guidelines(settings: Settings) -> list[dict[str, Any]]:
    """Loaded guidelines: code, name, current version."""
    return _run_read(settings, q.GUIDELINES)


def current_versions(settings: Settings) -> list[dict[str, Any]]:
    """The latest version of every guideline: code, version, source PDF sha256, load sequence number."""
    return _run_read(settings, q.CURRENT_VERSIONS)


def _change_rows(diff: GraphDiff) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for c in diff.changed:
        if c.constraints_before != c.constraints_after:
            rows.append({"op": "set", "uid": c.uid, "field": "constraints", "old": json.dumps(c.constraints_before),
                         "new": json.dumps(c.constraints_after)})
        if c.text_before != c.text_after:
            rows.append({"op": "set", "uid": c.uid, "field": "text", "old": c.text_before, "new": c.text_after})
    rows += [{"op": "add", "uid": c.uid, "field": "box", "old": None, "new": c.text_after} for c in diff.added]
    rows += [{"op": "remove", "uid": c.uid, "field": "box", "old": c.text_before, "new": None} for c in diff.removed]
    return rows


def versions(settings: Settings, code: str) -> list[dict[str, Any]]:
    """Every load of ``code``, oldest first."""
    return _run_read(settings, q.VERSIONS, code=code)


def diff_versions(settings: Settings, code: str, v1: str, v2: str) -> GraphDiff:
    """The difference between two loaded versions of a guideline.

    Raises:
        GraphLoadError: a version was never loaded.
    """
    a, b = snapshot(settings, code, v1), snapshot(settings, code, v2)
    if a is None or b is None:
        missing = v1 if a is None else v2
        raise GraphLoadError(f"{code} {missing} was never loaded (see `dkg graph versions {code}`)")
    return compute_diff(a, b)


def rollback(settings: Settings, code: str, version: str) -> LoadReport:
    """Restore ``code`` to a version loaded before (recorded as a new, 'rollback' load).

    Raises:
        GraphLoadError: that version was never loaded (e.g. a rollback past the first version).
    """
    target = snapshot(settings, code, version)
    if target is None:
        loaded = [v["version"] for v in versions(settings, code)]
        raise GraphLoadError(f"cannot roll {code} back to {version}: loaded versions are {loaded or 'none'}")
    return load_version(settings, target, kind="rollback")


def counts(settings: Settings, code: str) -> dict[str, int]:
    """Boxes, decisions, arrows and page links of the current version."""
    rows = _run_read(settings, q.COUNTS, code=code)
    return {k: int(v) for k, v in rows[0].items()} if rows else {}


def match_patient(settings: Settings, facts: dict[str, Any], code: str | None = None) -> list[dict[str, Any]]:
    """Decisions that hold for a patient and the boxes they lead to (one read-only query).

    Args:
        facts: attribute → value in the shared vocabulary (``age`` as a number; ``ph_status`` …).
        code: restrict to one guideline.
    """
    vocab = load_vocabulary()
    cat = [_camel(a) for a, s in vocab.attributes.items() if s.get("type") == "category"]
    num = [_camel(a) for a, s in vocab.attributes.items() if s.get("type") == "number"]
    from dkg.constraints.comparisons import ordinal_value

    spelled = dict(facts)
    for k, v in facts.items():  # "stage=2b" is the graph's "IIB", "cd30_status=Positive" its "positive"
        values = [str(x) for x in vocab.attributes.get(k, {}).get("values", [])]
        same = [x for x in values if v is not None and ordinal_value(x) == ordinal_value(str(v))]
        if same:
            spelled[k] = same[0]
    typed = {_camel(k): v for k, v in spelled.items() if v is not None}
    if code is None:
        return _run_read(settings, q.MATCH_PATIENT, facts=typed, catAttrs=cat, numAttrs=num)
    return _run_read(settings, q.MATCH_PATIENT_ONE, code=code, facts=typed, catAttrs=cat, numAttrs=num)


__all__ = ["BoxState", "EdgeState", "GraphDiff", "LoadReport", "compute_diff", "counts", "diff_versions",
           "load_version", "match_patient", "rollback", "versions"]


def edit_constraints(settings: Settings, code: str, box_uid: str, action: str,
                     payload: list[dict[str, Any]]) -> LoadReport:
    """The paper's operations on the decision layer: insert, delete or update a box's constraints.

    ``action`` is ``add`` (append the items), ``remove`` (drop the items) or ``set`` (replace all).
    The edit is loaded like a version (``<version>+edit.<n>``), so it is recorded, diffable and
    can be rolled back.

    Raises:
        GraphLoadError: unknown guideline or box, an item to remove that is not there, or an
            attribute/operator outside the vocabulary.
    """
    from dkg.constraints.models import items_from_json, items_to_json

    state = current_state(settings, code)
    if state is None:
        raise GraphLoadError(f"{code} is not loaded")
    box = state.boxes.get(box_uid)
    if box is None:
        raise GraphLoadError(f"{code} has no box {box_uid!r} (see `dkg match` or the graph for uids)")
    vocab = load_vocabulary()
    new_items = items_from_json(payload)
    from dkg.constraints.models import AnyOf

    for item in new_items:
        for c in ([m for alt in item.alternatives for m in alt] if isinstance(item, AnyOf) else [item]):
            if c.attr not in vocab.attributes or c.op not in vocab.operators:
                raise GraphLoadError(f"{c.attr!r} {c.op!r} is not in the constraint vocabulary")
    current = items_from_json(json.loads(box.constraints))
    if action == "add":
        merged = current + [i for i in new_items if i.key() not in {c.key() for c in current}]
    elif action == "remove":
        missing = [i for i in new_items if i.key() not in {c.key() for c in current}]
        if missing:
            raise GraphLoadError(f"{box_uid} has no constraint {json.dumps(items_to_json(missing))}")
        merged = [c for c in current if c.key() not in {i.key() for i in new_items}]
    elif action == "set":
        merged = new_items
    else:
        raise GraphLoadError(f"unknown constraint operation {action!r} (add, remove, set)")
    edits = sum(1 for v in versions(settings, code) if "+edit." in str(v["version"]))
    boxes = dict(state.boxes)
    boxes[box_uid] = BoxState(box.uid, box.page, box.text, box.textPlain, box.kind,
                              json.dumps(items_to_json(merged), ensure_ascii=False), box.column)
    base = state.version.split("+edit.")[0]
    edited = VersionState(state.code, state.name, f"{base}+edit.{edits + 1}", state.sha256, boxes, set(state.edges))
    return load_version(settings, edited, kind=f"edit-{action}")


def remove_guideline(settings: Settings, code: str) -> int:
    """Delete a guideline with all its versions, boxes, decisions and changes, in one transaction; the number
    of nodes deleted (0: it was not loaded)."""

    def work(tx: neo4j.ManagedTransaction) -> int:
        n = 0
        rec = tx.run("MATCH (:Decision {code: $c})-[:ALTERNATIVE]->(a:Alternative) DETACH DELETE a "
                     "RETURN count(*) AS n", c=code).single()
        n += int(rec["n"]) if rec else 0
        for label in ("Decision", "Box", "Change", "Path", "Version", "Guideline"):
            rec = tx.run(f"MATCH (x:{label} {{code: $c}}) DETACH DELETE x RETURN count(*) AS n", c=code).single()
            n += int(rec["n"]) if rec else 0
        return n

    with open_driver(settings) as driver, driver.session(database=settings.neo4j_database) as session:
        return int(session.execute_write(work))


def fingerprint(settings: Settings, codes: list[str]) -> dict[str, Any]:
    """What the graph holds for ``codes``, without load times: versions (in order, with their PDF hash and
    change count), boxes, decisions with their constraints, arrows and links. Two graphs built from the
    same PDFs in the same order have equal fingerprints, whichever machine or worker loaded them."""
    out: dict[str, Any] = {}
    for code in sorted(codes):
        versions_ = _run_read(settings, "MATCH (v:Version {code: $c}) OPTIONAL MATCH (v)-[:RECORDED]->(ch:Change) "
                              "RETURN v.version AS version, v.seq AS seq, v.sha256 AS sha256, v.kind AS kind, "
                              "count(ch) AS changes ORDER BY seq", c=code)
        boxes = _run_read(settings, "MATCH (b:Box {code: $c}) OPTIONAL MATCH (b)-[:HAS_DECISION]->(d:Decision) "
                          "RETURN b.uid AS uid, b.page AS page, b.text AS text, b.kind AS kind, "
                          "coalesce(b.retired, false) AS retired, d.constraints AS constraints ORDER BY uid", c=code)
        rels = _run_read(settings, "MATCH (h:Box {code: $c})-[r:ARROW|LINKS_TO]->(t:Box) "
                         "RETURN h.uid AS head, type(r) AS type, coalesce(r.label, '') AS label, t.uid AS tail "
                         "ORDER BY head, type, tail, label", c=code)
        current = _run_read(settings, "MATCH (g:Guideline {code: $c}) RETURN g.currentVersion AS v", c=code)
        out[code] = {"current": current[0]["v"] if current else None, "versions": versions_, "boxes": boxes,
                     "relations": rels}
    return out
