"""Every Cypher statement of the graph layer, as named, parameterised constants."""

SCHEMA = [
    "CREATE CONSTRAINT guideline_code IF NOT EXISTS FOR (g:Guideline) REQUIRE g.code IS UNIQUE",
    "CREATE CONSTRAINT version_key IF NOT EXISTS FOR (v:Version) REQUIRE v.key IS UNIQUE",
    "CREATE CONSTRAINT box_uid IF NOT EXISTS FOR (b:Box) REQUIRE b.uid IS UNIQUE",
    "CREATE CONSTRAINT decision_uid IF NOT EXISTS FOR (d:Decision) REQUIRE d.uid IS UNIQUE",
    "CREATE INDEX box_code IF NOT EXISTS FOR (b:Box) ON (b.code)",
    "CREATE INDEX decision_code IF NOT EXISTS FOR (d:Decision) ON (d.code)",
    "CREATE INDEX change_code_version IF NOT EXISTS FOR (c:Change) ON (c.code, c.version)",
    "CREATE INDEX path_code IF NOT EXISTS FOR (p:Path) ON (p.code)",
    "CREATE INDEX path_uid IF NOT EXISTS FOR (p:Path) ON (p.uid)",
]

VERSIONS = """
MATCH (g:Guideline {code: $code})-[:HAS_VERSION]->(v:Version)
WITH g, collect(v) AS vs, max(v.seq) AS last
UNWIND vs AS v
RETURN v.version AS version, v.seq AS seq, v.loadedAt AS loadedAt, v.sha256 AS sha256, v.kind AS kind,
       v.seq = last AS current
ORDER BY v.seq
"""

# The latest version of each guideline (what a dataset or cache built from the graph depends on).
CURRENT_VERSIONS = """
MATCH (g:Guideline)-[:HAS_VERSION]->(v:Version)
WITH g, v ORDER BY v.seq DESC
WITH g, collect(v)[0] AS v
RETURN g.code AS code, v.version AS version, v.sha256 AS sha256, v.seq AS seq
ORDER BY code
"""

# The first statement of every load: the guideline node's write lock, held until commit, serialises
# loads of one guideline (SET then REMOVE: the lock is taken, the property does not stay).
LOCK_GUIDELINE = """
MERGE (g:Guideline {code: $code})
SET g._loading = true
REMOVE g._loading
"""

MERGE_VERSION = """
MERGE (g:Guideline {code: $code})
ON CREATE SET g.name = $name
WITH g
OPTIONAL MATCH (g)-[:HAS_VERSION]->(old:Version)
WITH g, coalesce(max(old.seq), 0) AS last
CREATE (v:Version {key: $code + '@' + $version + '#' + toString(last + 1), code: $code, version: $version,
                   seq: last + 1, sha256: $sha256, loadedAt: datetime(), kind: $kind, snapshot: $snapshot})
CREATE (g)-[:HAS_VERSION]->(v)
SET g.currentVersion = $version, g.name = coalesce($name, g.name)
RETURN v.seq AS seq
"""

UPSERT_BOXES = """
UNWIND $rows AS row
MERGE (b:Box {uid: row.uid})
SET b.code = $code, b.page = row.page, b.text = row.text, b.textPlain = row.textPlain, b.kind = row.kind,
    b.column = row.column, b.retired = false, b.sourceSha256 = $sha256
"""

# A first load (no box of the guideline in the graph yet): CREATE instead of MERGE, nothing to re-match or
# to clean up. The uniqueness constraints still hold: a box that exists after all fails the whole load.
CREATE_BOXES = """
UNWIND $rows AS row
CREATE (b:Box {uid: row.uid, code: $code, page: row.page, text: row.text, textPlain: row.textPlain,
               kind: row.kind, column: row.column, retired: false, sourceSha256: $sha256})
"""

CREATE_DECISIONS = """
UNWIND $rows AS row
MATCH (b:Box {uid: row.uid})
CREATE (b)-[:HAS_DECISION]->(d:Decision)
SET d = row.props
SET d.uid = row.uid + '#decision', d.code = $code, d.constraints = row.constraints
"""

CREATE_ARROWS = """
UNWIND $rows AS row
MATCH (h:Box {uid: row.head})
MATCH (t:Box {uid: row.tail})
CREATE (h)-[:ARROW {label: row.label}]->(t)
"""

CREATE_LINKS = """
UNWIND $rows AS row
MATCH (h:Box {uid: row.head})
MATCH (t:Box {uid: row.tail})
CREATE (h)-[:LINKS_TO]->(t)
"""

BOXES_OF = """
MATCH (b:Box {code: $code}) RETURN count(b) AS n
"""

RETIRE_BOXES = """
UNWIND $uids AS uid
MATCH (b:Box {uid: uid})
SET b.retired = true
WITH b
OPTIONAL MATCH (b)-[r]-()
DELETE r
"""

SET_DECISIONS = """
UNWIND $rows AS row
MATCH (b:Box {uid: row.uid})
MERGE (d:Decision {uid: row.uid + '#decision'})
SET d = row.props
SET d.uid = row.uid + '#decision', d.code = $code, d.constraints = row.constraints
MERGE (b)-[:HAS_DECISION]->(d)
WITH d
OPTIONAL MATCH (d)-[:ALTERNATIVE]->(a:Alternative)
DETACH DELETE a
"""

ADD_ALTERNATIVES = """
UNWIND $rows AS row
MATCH (d:Decision {uid: row.uid + '#decision'})
CREATE (a:Alternative)
SET a += row.props
CREATE (d)-[:ALTERNATIVE]->(a)
"""

REMOVE_DECISIONS = """
UNWIND $uids AS uid
MATCH (d:Decision {uid: uid + '#decision'})
OPTIONAL MATCH (d)-[:ALTERNATIVE]->(a:Alternative)
DETACH DELETE a, d
"""

ADD_EDGES = """
UNWIND $rows AS row
MATCH (h:Box {uid: row.head}), (t:Box {uid: row.tail})
FOREACH (_ IN CASE WHEN row.type = 'ARROW' THEN [1] ELSE [] END | MERGE (h)-[r:ARROW]->(t) SET r.label = row.label)
FOREACH (_ IN CASE WHEN row.type = 'LINKS_TO' THEN [1] ELSE [] END | MERGE (h)-[:LINKS_TO]->(t))
"""

REMOVE_EDGES = """
UNWIND $rows AS row
MATCH (h:Box {uid: row.head})-[r]->(t:Box {uid: row.tail})
WHERE type(r) = row.type
DELETE r
"""

REFRESH_NEXT_STEPS = """
MATCH (d:Decision {code: $code})<-[:HAS_DECISION]-(b:Box)
OPTIONAL MATCH (d)-[old:NEXT_STEP]->()
DELETE old
WITH DISTINCT d, b
MATCH (b)-[:ARROW|LINKS_TO]->(next:Box)
MERGE (d)-[:NEXT_STEP]->(next)
"""

REFRESH_NEXT_STEPS_OF = """
UNWIND $uids AS uid
MATCH (d:Decision {uid: uid + '#decision'})<-[:HAS_DECISION]-(b:Box)
OPTIONAL MATCH (d)-[old:NEXT_STEP]->()
DELETE old
WITH DISTINCT d, b
MATCH (b)-[:ARROW|LINKS_TO]->(next:Box)
MERGE (d)-[:NEXT_STEP]->(next)
"""

RECORD_CHANGES = """
MATCH (v:Version {code: $code, seq: $seq})
UNWIND $rows AS row
CREATE (c:Change {code: $code, version: $version, seq: $seq, at: datetime(), op: row.op, uid: row.uid,
                  field: row.field, old: row.old, new: row.new})
CREATE (v)-[:RECORDED]->(c)
"""

# The latest version's snapshot of every guideline, in one read (what a question reader is built from).
CURRENT_SNAPSHOTS = """
MATCH (g:Guideline)-[:HAS_VERSION]->(v:Version)
WITH g, v ORDER BY v.seq DESC
WITH g, head(collect(v)) AS v
RETURN g.code AS code, v.snapshot AS snapshot ORDER BY code
"""

VERSION_SNAPSHOT = """
MATCH (g:Guideline {code: $code})-[:HAS_VERSION]->(v:Version {version: $version})
RETURN v.snapshot AS snapshot ORDER BY v.seq DESC LIMIT 1
"""

COUNTS = """
MATCH (b:Box {code: $code}) WHERE b.retired = false
WITH count(b) AS boxes
OPTIONAL MATCH (d:Decision {code: $code})
WITH boxes, count(d) AS decisions
OPTIONAL MATCH (h:Box {code: $code})-[r:ARROW]->(:Box) WHERE h.retired = false
WITH boxes, decisions, count(r) AS arrows
OPTIONAL MATCH (h:Box {code: $code})-[l:LINKS_TO]->(:Box) WHERE h.retired = false
RETURN boxes, decisions, arrows, count(l) AS links
"""

# One read-only query over the decision layer. A decision holds when each of its typed
# constraints holds for the patient's facts (a constraint on a fact not given does not hold), and,
# when it has OR-alternatives, at least one of them holds. Returns the boxes it leads to.
_HOLDS = """
all(a IN $catAttrs WHERE {n}[a] IS NULL OR ($facts[a] IS NOT NULL AND $facts[a] IN {n}[a]))
AND all(a IN $numAttrs WHERE
      ({n}[a + 'Min'] IS NULL OR ($facts[a] IS NOT NULL AND $facts[a] >= {n}[a + 'Min']))
  AND ({n}[a + 'Max'] IS NULL OR ($facts[a] IS NOT NULL AND $facts[a] <= {n}[a + 'Max']))
  AND ({n}[a + 'Above'] IS NULL OR ($facts[a] IS NOT NULL AND $facts[a] > {n}[a + 'Above']))
  AND ({n}[a + 'Below'] IS NULL OR ($facts[a] IS NOT NULL AND $facts[a] < {n}[a + 'Below'])))
"""

_MATCH_PATIENT_BODY = (
    """
MATCH (b:Box {code: g.code})-[:HAS_DECISION]->(d:Decision)
WHERE b.retired = false AND """ + _HOLDS.format(n="d") + """
  AND (NOT EXISTS { (d)-[:ALTERNATIVE]->() }
       OR EXISTS { MATCH (d)-[:ALTERNATIVE]->(x:Alternative) WHERE """ + _HOLDS.format(n="x") + """ })
MATCH (d)-[:NEXT_STEP]->(next:Box)
WITH g, b, d, next ORDER BY next.page, next.uid
RETURN g.code AS guideline, g.currentVersion AS version, b.uid AS decision, b.page AS page,
       b.textPlain AS condition, d.constraints AS constraints,
       collect({uid: next.uid, page: next.page, text: next.textPlain, kind: next.kind}) AS next
ORDER BY page, decision
"""
)
MATCH_PATIENT = "MATCH (g:Guideline)" + _MATCH_PATIENT_BODY
# one guideline by its unique code: a separate query, not ``$code IS NULL OR g.code = $code``, whose one
# cached plan served both cases and on a 300-guideline graph took 15x as long for one guideline as on 3
MATCH_PATIENT_ONE = "MATCH (g:Guideline {code: $code})" + _MATCH_PATIENT_BODY

# Decision paths (derived from boxes and edges on every load; see dkg.graph.paths).
PATH_HASHES = """
MATCH (p:Path {code: $code})
RETURN p.uid AS uid, p.hash AS hash
"""

DELETE_PATHS_BY_UID = """
UNWIND $uids AS uid
MATCH (p:Path {uid: uid})
DETACH DELETE p
"""

CREATE_PATHS = """
UNWIND $rows AS row
MATCH (d:Decision {uid: row.decision + '#decision'})
CREATE (p:Path)
SET p = row.props
CREATE (p)-[:REACHES]->(d)
"""

PATH_COUNT = """
MATCH (p:Path {code: $code}) RETURN count(p) AS paths
"""

GUIDELINES = """
MATCH (g:Guideline)
RETURN g.code AS code, g.name AS name, g.currentVersion AS version ORDER BY code
"""

GUIDELINE_CODES = "MATCH (g:Guideline) RETURN g.code AS code"

# Evidence for answers: each box with its guideline, version and whether it is itself a decision.
BOX_EVIDENCE = """
UNWIND $uids AS uid
MATCH (b:Box {uid: uid})
MATCH (g:Guideline {code: b.code})
OPTIONAL MATCH (b)-[:HAS_DECISION]->(d:Decision)
RETURN b.uid AS uid, g.code AS guideline, g.currentVersion AS version, b.page AS page, b.textPlain AS text,
       d.constraints AS constraints
"""

PAGE_EXISTS = """
MATCH (b:Box {code: $code, page: $page}) WHERE b.retired = false RETURN count(b) > 0 AS exists
"""
