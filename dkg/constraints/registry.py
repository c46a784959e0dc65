"""The attribute registry: every patient attribute a constraint may name, with its type and status.

The three reference guidelines' vocabulary (``conf/constraints.yaml``) is the seed: those
attributes are ``approved``. The open-vocabulary extractor proposes the others as it meets them
("Deauville 1–3", "CrCl < 30 mL/min", "stage IIB", "non-bulky"): name, type (number with unit and
plausible range / ordinal with its ordered values / category with its values), aliases, where it
was first seen (guideline, version, page, box) and status ``proposed``. A data engineer approves,
renames or merges them (in the Prefect UI when a build pauses, or ``dkg vocab``); only approved
attributes pass the Great Expectations gate and reach the graph.

The registry is one JSON file under the state folder, written atomically; every change raises
its ``version`` and keeps a copy of that version under ``history/``, and each build records the
registry version it was validated against.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from dkg.constraints.comparisons import (
    BETWEEN,
    EQ,
    GT,
    GTEQ,
    IN,
    LT,
    LTEQ,
    PLUS_MINUS,
    Comparison,
    number_value,
    ordinal_value,
)
from dkg.constraints.models import AnyOf, Constraint, Item
from dkg.errors import ConstraintError, StorageError
from dkg.settings import Settings
from dkg.storage import atomic_files

AttrType = Literal["number", "ordinal", "category", "text"]
Status = Literal["proposed", "approved", "rejected"]

_OPS = {GT: ">", GTEQ: ">=", LT: "<", LTEQ: "<=", EQ: "="}
_TRAILING = re.compile(r"(?:\s+(?:score|scores|level|levels|value|values|result|results|count|grade))+$", re.IGNORECASE)
_GENERIC_NAMES = {"score", "level", "value", "result", "grade", "class", "group", "status", "type", "n"}
_ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"]


class Origin(BaseModel):
    """Where an attribute (or a value of it) was first seen."""

    guideline: str = ""
    version: str = ""
    page: str = ""
    box: str = ""
    text: str = ""


class Attribute(BaseModel):
    """One attribute of the registry."""

    name: str
    type: AttrType
    unit: str | None = None
    min: float | None = None
    max: float | None = None
    values: list[str] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)
    first_seen: Origin = Field(default_factory=Origin)
    status: Status = "proposed"
    proposed_values: list[str] = Field(default_factory=list)
    examples: list[Origin] = Field(default_factory=list)

    def vocab_spec(self) -> dict[str, Any]:
        """The attribute as the vocabulary's ``attributes`` entry (ordinal values are a category)."""
        if self.type == "number":
            spec: dict[str, Any] = {"type": "number"}
            if self.unit:
                spec["unit"] = self.unit
            if self.min is not None:
                spec["min"] = self.min
            if self.max is not None:
                spec["max"] = self.max
            return spec
        if self.type in ("ordinal", "category"):
            return {"type": "category", "values": list(self.values), "ordinal": self.type == "ordinal"}
        return {"type": "text"}


class Registry(BaseModel):
    """The registry file's content."""

    version: int = 0
    attributes: dict[str, Attribute] = Field(default_factory=dict)

    # --- lookup --------------------------------------------------------------------------

    def resolve(self, words: str) -> Attribute | None:
        """The attribute these words name: its name or an alias (case and spacing ignored), else the
        head of the phrase (its last words: "favorable risk and KPS" → the alias "KPS")."""
        key = alias_key(words)
        if not key:
            return None
        keys: dict[str, Attribute] = {}
        for a in self.attributes.values():
            if a.status != "rejected":
                for k in (alias_key(a.name), *(alias_key(x) for x in a.aliases)):
                    keys.setdefault(k, a)
        if key in keys:
            return keys[key]
        parts = [p for p in re.split(r"\s+(?:and|or)\s+|\s*[,;/]\s*", key) if p]
        for part in reversed(parts):
            tokens = part.split()
            for i in range(len(tokens)):
                sub = " ".join(tokens[i:])
                if sub in keys and sub not in _GENERIC_NAMES:
                    return keys[sub]
        return None

    def approved(self) -> dict[str, Attribute]:
        """Approved attributes by name."""
        return {n: a for n, a in self.attributes.items() if a.status == "approved"}

    def pending(self) -> list[Attribute]:
        """Attributes, or values of approved attributes, that wait for a decision."""
        return [a for a in self.attributes.values() if a.status == "proposed" or a.proposed_values]

    # --- decisions -----------------------------------------------------------------------

    def approve(self, names: Iterable[str] | None = None) -> list[str]:
        """Approve the named pending attributes (all when None), with their proposed values."""
        wanted = set(names) if names is not None else None
        done = []
        for a in self.pending():
            if wanted is not None and a.name not in wanted:
                continue
            a.status = "approved"
            a.values = _merge_values(a.values, a.proposed_values, a.type)
            a.proposed_values = []
            done.append(a.name)
        unknown = (wanted or set()) - {a.name for a in self.attributes.values()}
        if unknown:
            raise ConstraintError(f"no attribute named {', '.join(sorted(unknown))} in the registry")
        return done

    def reject(self, names: Iterable[str]) -> list[str]:
        """Reject proposed attributes: their constraints stay out of the graph (the gate refuses them)."""
        out = []
        for n in names:
            a = self._get(n)
            if a.status == "approved" and not a.proposed_values:
                raise ConstraintError(f"{n} is approved; only proposals can be rejected")
            if a.status == "approved":
                a.proposed_values = []
            else:
                a.status = "rejected"
            out.append(n)
        return out

    def rename(self, old: str, new: str) -> None:
        """Give an attribute a new name; the old one stays as an alias."""
        a = self._get(old)
        if new in self.attributes:
            raise ConstraintError(f"cannot rename {old} to {new}: {new} exists (merge instead)")
        if not re.fullmatch(r"[a-z][a-z0-9_]*", new):
            raise ConstraintError(f"attribute names are snake_case ({new!r} is not)")
        del self.attributes[old]
        a.aliases = _unique([*a.aliases, old.replace("_", " ")])
        a.name = new
        self.attributes[new] = a

    def merge(self, source: str, into: str) -> None:
        """Merge ``source`` into ``into``: one attribute, the source's names become aliases.

        Raises:
            ConstraintError: the two have different types, or their units do not convert.
        """
        src, dst = self._get(source), self._get(into)
        if source == into:
            raise ConstraintError(f"cannot merge {source} into itself")
        if src.type != dst.type and {src.type, dst.type} != {"ordinal", "category"}:
            raise ConstraintError(f"cannot merge {source} ({src.type}) into {into} ({dst.type}): the types differ")
        if src.type == "number" and src.unit and dst.unit and convert(1.0, src.unit, dst.unit) is None:
            raise ConstraintError(f"cannot merge {source} into {into}: unit {src.unit!r} does not convert to "
                                  f"{dst.unit!r}")
        dst.aliases = _unique([*dst.aliases, source.replace("_", " "), *src.aliases])
        dst.proposed_values = [v for v in _merge_values(dst.proposed_values, [*src.values, *src.proposed_values],
                                                        dst.type) if v not in dst.values]
        if src.type == "number":
            lo = [x for x in (dst.min, _conv(src.min, src.unit, dst.unit)) if x is not None]
            hi = [x for x in (dst.max, _conv(src.max, src.unit, dst.unit)) if x is not None]
            dst.min, dst.max = (min(lo) if lo else None), (max(hi) if hi else None)
        del self.attributes[source]

    def _get(self, name: str) -> Attribute:
        if name not in self.attributes:
            raise ConstraintError(f"no attribute named {name!r} in the registry (see `dkg vocab list`)")
        return self.attributes[name]


# British and American spellings of the same medical words name one attribute ("tumour size" is "tumor size")
_SPELLINGS = ((r"tumour", "tumor"), (r"oesophag", "esophag"), (r"oedema", "edema"), (r"haem", "hem"),
              (r"anaem", "anem"), (r"aemia", "emia"), (r"paediatr", "pediatr"), (r"isation", "ization"))


def american(text: str) -> str:
    """``text`` (lower case) in American spelling ("leukaemia" → "leukemia")."""
    for british, us in _SPELLINGS:
        text = text.replace(british, us)
    return text


def either_spelling(pattern: str) -> str:
    """A pattern written in American spelling that also matches the British one."""
    for british, us in _SPELLINGS:
        pattern = pattern.replace(us, f"(?:{us}|{british})")
    return pattern


def alias_key(words: str) -> str:
    """Words as an alias key: lower case, no punctuation, no trailing "score"/"level", American spelling."""
    w = re.sub(r"[^\w\s+-]", " ", words.replace("_", " ")).strip()
    w = _TRAILING.sub("", w).strip() or w
    return american(re.sub(r"\s+", " ", w).lower())


def snake_name(words: str) -> str:
    """A snake_case attribute name for words ("Deauville score" → ``deauville``)."""
    w = re.sub(r"\([^)]*\)", " ", words)
    key = alias_key(w) or alias_key(words)
    return re.sub(r"[^a-z0-9]+", "_", key).strip("_") or "attribute"


def _unique(xs: Iterable[str]) -> list[str]:
    out: list[str] = []
    for x in xs:
        if x and x not in out:
            out.append(x)
    return out


def _ordinal_sort_key(v: str) -> tuple[int, str]:
    o = ordinal_value(v)
    m = re.match(r"(\d+)(.*)", o)
    return (int(m.group(1)), m.group(2)) if m else (999, o)


def _merge_values(values: list[str], more: list[str], kind: str) -> list[str]:
    out = _unique([*values, *more])
    return sorted(out, key=_ordinal_sort_key) if kind == "ordinal" else out


# --- units ----------------------------------------------------------------------------

_UNIT_SPELLING = {"y": "years", "yr": "years", "yrs": "years", "year": "years", "yo": "years", "y/o": "years",
                  "mo": "months", "mos": "months", "month": "months", "wk": "weeks", "wks": "weeks", "week": "weeks",
                  "d": "days", "day": "days", "percent": "%", "kg/m²": "kg/m2", "ml/min": "mL/min",
                  "ml/min/1.73 m2": "mL/min/1.73 m2", "ml/min/1.73m2": "mL/min/1.73 m2", "g/dl": "g/dL",
                  "mg/dl": "mg/dL", "ng/ml": "ng/mL", "mmhg": "mmHg", "µmol/l": "µmol/L", "umol/l": "µmol/L",
                  "mmol/l": "mmol/L", "g/l": "g/L", "cm": "cm", "mm": "mm"}
_PINT_LOCK = threading.Lock()
_PINT: Any = None


def canonical_unit(unit: str | None) -> str | None:
    """One spelling per unit ("mg/dl" → "mg/dL", "yrs" → "years")."""
    if not unit:
        return None
    u = re.sub(r"\s+", " ", unit.strip())
    return _UNIT_SPELLING.get(u.lower(), u)


def _pint_quantity(value: float, unit: str) -> Any:
    global _PINT
    try:
        import pint
    except ImportError:  # pragma: no cover - pint is a declared dependency
        return None
    with _PINT_LOCK:
        if _PINT is None:
            _PINT = pint.UnitRegistry()
            _PINT.define("percent = 0.01 = %")
        expr = unit.replace("µ", "u").replace("μ", "u").replace("m2", "m**2").replace("²", "**2").replace(" ", "*")
        try:
            return _PINT.Quantity(value, expr)
        except Exception:
            return None


def convert(value: float, unit: str, to: str) -> float | None:
    """``value`` in ``unit`` expressed in ``to``; None when the units do not convert."""
    a, b = canonical_unit(unit), canonical_unit(to)
    if a == b:
        return value
    if a is None or b is None:
        return None
    q = _pint_quantity(value, a)
    target = _pint_quantity(1.0, b)
    if q is None or target is None:
        return None
    try:
        return float(q.to(target.units).magnitude)
    except Exception:
        return None


def _conv(v: float | None, unit: str | None, to: str | None) -> float | None:
    if v is None or not unit or not to:
        return v
    return convert(v, unit, to)


# --- comparisons → constraints ----------------------------------------------------------


@dataclass(frozen=True)
class Where:
    """The box a comparison came from, for first-seen records and error messages."""

    guideline: str = ""
    version: str = ""
    page: str = ""
    box: str = ""
    text: str = ""

    def origin(self) -> Origin:
        return Origin(guideline=self.guideline, version=self.version, page=self.page, box=self.box,
                      text=self.text[:200])

    def __str__(self) -> str:
        place = " ".join(x for x in (self.guideline, self.version) if x)
        return f"{place} page {self.page or '?'} box {self.box or '?'} ({self.text[:60]!r})"


def _roman(v: str) -> str:
    o = ordinal_value(v)
    m = re.fullmatch(r"(\d+)([A-D]?)", o)
    if m and 1 <= int(m.group(1)) <= len(_ROMAN) and not re.fullmatch(r"\d+[a-dA-D]?", v.strip()):
        return _ROMAN[int(m.group(1)) - 1] + m.group(2)
    return v.strip()


def _number(v: str) -> int | float | None:
    n = number_value(v)
    if n is None:
        return None
    return int(n) if n.is_integer() else n


def _stage_values(c: Comparison, known: Sequence[str] = ()) -> list[str]:
    """The stages a comparison names; a range lists every stage in it. Between sub-stages ("IA–IIA", "IIIA–IIIC")
    it lists the sub-stages in between, the letters of each stage being those the attribute has seen, and at least
    A and B ("IA–IIA" is IA, IB, IIA)."""
    vals = [_roman(v) for v in c.values]
    if c.op == BETWEEN and len(vals) == 2:
        lo, hi = sorted(vals, key=_ordinal_sort_key)
        (klo, llo), (khi, lhi) = _ordinal_sort_key(lo), _ordinal_sort_key(hi)
        if re.search(r"\d", lo + hi) or khi > len(_ROMAN):
            return vals
        if klo < khi and not llo and not lhi:
            middle = [_ROMAN[i - 1] for i in range(klo + 1, khi)]
            return _unique([lo, *middle, hi])
        if llo and lhi and re.fullmatch(r"[A-D]", llo) and re.fullmatch(r"[A-D]", lhi) and klo <= khi:
            def letters(k: int) -> str:
                seen = [_ordinal_sort_key(_roman(v))[1] for v in known if _ordinal_sort_key(_roman(v))[0] == k]
                return max(["B", *(x for x in seen if re.fullmatch(r"[A-D]", x))])

            out = []
            for k in range(klo, khi + 1):
                first = llo if k == klo else "A"
                last = lhi if k == khi else letters(k)
                out += [_ROMAN[k - 1] + chr(x) for x in range(ord(first), ord(last) + 1)]
            return out
    return vals


def constraints_for(registry: Registry, c: Comparison, where: Where) -> tuple[str, list[Item]] | None:
    """Constraints in the registry's terms for one comparison, proposing what is new.

    Returns the attribute name and the items, or None when the comparison names no attribute.

    Raises:
        ConstraintError: a number's unit does not convert to the attribute's unit (names the box).
    """
    if c.attr is None or (alias_key(c.attr) in _GENERIC_NAMES and c.kind != "stage"):
        return None
    kind: AttrType = "ordinal" if c.kind == "stage" else "category" if c.kind == "category" else "number"
    if kind == "number" and any(_number(v) is None for v in c.values):
        kind = "ordinal"
    attr = registry.resolve(c.attr)
    if attr is None and c.kind == "stage":
        attr = registry.resolve(re.sub(r"^.*\b(stage|grade|class|category)$", r"\1", c.attr, flags=re.I))
    if attr is None:
        name = "age" if c.kind == "age" else snake_name(c.attr)
        if kind == "category" and c.attr.endswith(" status"):
            name = snake_name(c.attr[: -len(" status")]) + "_status"  # "CD20 status" → cd20_status
        if name in registry.attributes:  # same name, other spelling: an alias
            attr = registry.attributes[name]
            attr.aliases = _unique([*attr.aliases, c.attr])
        else:
            attr = Attribute(name=name, type=kind, unit=canonical_unit(c.unit) if kind == "number" else None,
                             aliases=_unique([c.attr, *re.findall(r"\(([^)]+)\)", c.attr)]),
                             first_seen=where.origin(), status="proposed")
            registry.attributes[name] = attr
    if len(attr.examples) < 3 and where.box not in {e.box for e in attr.examples}:
        attr.examples.append(where.origin())
    if attr.type == "number" and c.kind == "category" and all(_number(v) is None for v in c.values):
        return None  # a finding in words whose name is a measured attribute's ("PD-L1 CPS" stated, no number read)
    if attr.type == "number":
        return attr.name, _numeric_items(attr, c, where)
    if attr.type in ("ordinal", "category"):
        values = _stage_values(c, [*attr.values, *attr.proposed_values]) if c.kind == "stage" else list(c.values)
        values = [_spelled_like(attr, v) for v in values]
        new = [v for v in values if v not in attr.values and v not in attr.proposed_values]
        if c.kind == "category" and set(values) <= {"positive", "negative"}:
            new += [v for v in ("positive", "negative") if v not in new]  # a marker is one or the other
        elif c.kind == "category" and set(values) <= {"yes", "no"}:
            new += [v for v in ("yes", "no") if v not in new]
        new = [v for v in new if v not in attr.values and v not in attr.proposed_values]
        if new:
            attr.proposed_values = _merge_values(attr.proposed_values, new, attr.type)
        if c.op in (GT, GTEQ, LT, LTEQ) and attr.type == "ordinal" and len(values) == 1:
            return attr.name, [Constraint(attr=attr.name, op=_OPS[c.op], value=values[0])]
        if len(values) == 1:
            return attr.name, [Constraint(attr=attr.name, op="=", value=values[0])]
        return attr.name, [Constraint(attr=attr.name, op="in", value=values)]
    return None


@dataclass
class RegistryOpener:
    """The extractor's open-vocabulary path for one box: resolves through, and proposes to, a registry."""

    registry: Registry
    where: Where

    def known_attribute(self, comparison: Comparison) -> str | None:
        if comparison.attr is None:
            return None
        if comparison.kind == "age":
            return "age"
        a = self.registry.resolve(comparison.attr)
        return a.name if a else None

    def items(self, comparison: Comparison) -> list[Item]:
        if comparison.op == PLUS_MINUS:  # a tolerance ("stable ± 3 kg") bounds no attribute of a box
            return []
        found = constraints_for(self.registry, comparison, self.where)
        return found[1] if found else []


def _spelled_like(attr: Attribute, v: str) -> str:
    """A value in the spelling the attribute already uses ("2" → "II" when its values are roman)."""
    for known in [*attr.values, *attr.proposed_values]:
        if ordinal_value(known) == ordinal_value(v):
            return known
    return v


def _numeric_items(attr: Attribute, c: Comparison, where: Where) -> list[Item]:
    unit = canonical_unit(c.unit)
    if attr.unit is None and unit:
        attr.unit = unit if c.kind != "age" else "years"
    nums: list[float] = []
    for v in c.values:
        n = number_value(v)
        if n is None:
            raise ConstraintError(f"{where}: value {v!r} of {attr.name} is not a number")
        if unit and attr.unit and unit != attr.unit and not (c.kind == "age" and unit in ("years", "%")):
            conv = convert(n, unit, attr.unit)
            if conv is None:
                raise ConstraintError(f"{where}: unit {unit!r} of {attr.name} does not convert to the attribute's "
                                      f"unit {attr.unit!r}")
            n = conv
        nums.append(round(n, 6))
    if attr.status == "proposed":  # a plausible range around what was seen; approval fixes it
        for n in nums:
            lo = min(0.0, n)
            hi = 100.0 if attr.unit == "%" else max(abs(n) * 10, 10.0)
            attr.min = lo if attr.min is None else min(attr.min, lo)
            attr.max = hi if attr.max is None else max(attr.max, hi)

    def num(x: float) -> int | float:
        return int(x) if float(x).is_integer() else x

    out_unit = attr.unit
    if c.op == BETWEEN and len(nums) == 2:
        lo, hi = sorted(nums)
        return [Constraint(attr=attr.name, op=">=", value=num(lo), unit=out_unit),
                Constraint(attr=attr.name, op="<=", value=num(hi), unit=out_unit)]
    if c.op == IN:
        ints = sorted(nums)
        if all(float(x).is_integer() for x in ints) and ints == list(range(int(ints[0]), int(ints[-1]) + 1)):
            return [Constraint(attr=attr.name, op=">=", value=num(ints[0]), unit=out_unit),
                    Constraint(attr=attr.name, op="<=", value=num(ints[-1]), unit=out_unit)]
        return [AnyOf(alternatives=tuple((Constraint(attr=attr.name, op="=", value=num(x), unit=out_unit),)
                                         for x in ints))]
    return [Constraint(attr=attr.name, op=_OPS.get(c.op, "="), value=num(nums[0]), unit=out_unit)]


# --- the file ---------------------------------------------------------------------------


def seed_registry(vocab_attributes: dict[str, dict[str, Any]], numeric: dict[str, Any]) -> Registry:
    """The approved seed: the vocabulary's attributes, with aliases from its numeric cues."""
    reg = Registry(version=1)
    for name, spec in vocab_attributes.items():
        kind: AttrType = spec.get("type", "text")
        aliases = [name.replace("_", " ")]
        if name == "performance_status":
            aliases += ["ECOG", "ECOG PS", "ECOG performance status", "WHO PS", "Zubrod", "KPS",
                        "Karnofsky", "Karnofsky performance status", "Eastern Cooperative Oncology Group"]
        if name == "t_category":
            aliases += ["T category", "T stage"]
        reg.attributes[name] = Attribute(
            name=name, type=kind if kind in ("number", "category", "text") else "text", unit=spec.get("unit"),
            min=spec.get("min"), max=spec.get("max"), values=[str(v) for v in spec.get("values", [])],
            aliases=aliases, first_seen=Origin(guideline="conf/constraints.yaml"), status="approved")
    return reg


def registry_path(settings: Settings) -> Path:
    """Where the registry file is (``DKG_REGISTRY_FILE``, else under the state folder)."""
    if settings.registry_file is not None:
        return settings.registry_file.expanduser().resolve()
    return settings.state_path / "registry" / "attributes.json"


def read_registry(path: Path, seed: Registry) -> Registry:
    """The registry at ``path``; the seed when there is none yet (not written until saved).

    Raises:
        ConstraintError: the file exists but is not a registry (names the file).
    """
    if not path.exists():
        return seed.model_copy(deep=True)
    try:
        reg = Registry.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConstraintError(f"{path}: not an attribute registry ({e})") from e
    for name, a in seed.attributes.items():  # a seed attribute added to the YAML later joins approved
        reg.attributes.setdefault(name, a.model_copy(deep=True))
    return reg


def write_registry(reg: Registry, path: Path) -> int:
    """Save the registry as a new version (and keep that version's copy); returns the version."""
    reg.version += 1
    text = reg.model_dump_json(indent=1)
    history = path.parent / "history" / f"attributes-v{reg.version:05d}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        history.parent.mkdir(parents=True, exist_ok=True)
        with atomic_files([path, history]) as (tmp, tmp_h):
            tmp.write_text(text, encoding="utf-8")
            tmp_h.write_text(text, encoding="utf-8")
    except OSError as e:
        raise StorageError(f"{path}: the registry could not be written ({e})") from e
    return reg.version


def describe_pending(reg: Registry) -> list[dict[str, Any]]:
    """One row per pending attribute or value set, for artifacts and `dkg vocab list`."""
    rows = []
    for a in reg.pending():
        ex = a.examples[0] if a.examples else a.first_seen
        rows.append({
            "attribute": a.name, "status": a.status, "type": a.type, "unit": a.unit or "",
            "range": "" if a.min is None else f"{a.min:g}–{a.max:g}",
            "values": ", ".join(a.values if a.status == "proposed" else []) or ", ".join(a.proposed_values),
            "new values": ", ".join(a.proposed_values) if a.status == "approved" else "",
            "aliases": ", ".join(a.aliases), "example": f"{ex.guideline} {ex.version} page {ex.page}: {ex.text[:80]}",
        })
    return rows


def pending_markdown(reg: Registry, title: str) -> str:
    """The approval artifact: each new attribute, its type, values and example boxes with page."""
    lines = [f"# {title}", "", "These attributes (or values) are not approved yet; nothing is loaded until they are.",
             "", "| attribute | status | type | unit | range / values | aliases | seen in |",
             "|---|---|---|---|---|---|---|"]
    for a in reg.pending():
        vals = a.proposed_values if a.status == "approved" else (a.values + a.proposed_values)
        rng = f"{a.min:g}–{a.max:g}" if a.min is not None and a.max is not None else ", ".join(vals)
        seen = "<br>".join(f"{e.guideline} {e.version} p. {e.page} `{e.box}`: {e.text[:70]}"
                           for e in (a.examples or [a.first_seen]))
        label = f"{a.name} (new values of an approved attribute)" if a.status == "approved" else a.name
        lines.append(f"| {label} | {a.status} | {a.type} | {a.unit or ''} | {rng} | {', '.join(a.aliases)} | {seen} |")
    lines += ["", "Answer the run's input form: approve all, approve with renames/merges "
              "(`{\"rename\": {\"old\": \"new\"}, \"merge\": {\"source\": \"existing\"}}`), or reject."]
    return "\n".join(lines)


def apply_decision(reg: Registry, names: list[str], decision: dict[str, Any], path: Path, who: str) -> list[str]:
    """Apply an approval decision to the pending ``names`` and save the registry.

    ``decision``: ``action`` (``approve_all`` | ``approve_with_changes`` | ``reject``), ``merge``
    ({source: existing}), ``rename`` ({old: new}), ``reject`` (names). Returns the names the
    constraint CSV must now use instead of the pending ones (after merges and renames).

    Raises:
        ConstraintError: an unknown name, a merge across types or units, or everything rejected.
    """
    action = decision.get("action", "approve_all")
    final = list(names)
    for source, into in (decision.get("merge") or {}).items():
        reg.merge(source, into)
        final = [into if n == source else n for n in final]
    for old, new in (decision.get("rename") or {}).items():
        reg.rename(old, new)
        final = [new if n == old else n for n in final]
    rejected = list(decision.get("reject") or [])
    if action == "reject":
        rejected = [n for n in final if n in reg.attributes]
    if rejected:
        reg.reject(rejected)
    to_approve = [n for n in final if n in reg.attributes and n not in rejected and
                  (reg.attributes[n].status == "proposed" or reg.attributes[n].proposed_values)]
    reg.approve(to_approve)
    for n in to_approve:
        reg.attributes[n].examples = reg.attributes[n].examples[:3]
    write_registry(reg, path)
    if rejected:
        raise ConstraintError(f"attribute(s) {', '.join(rejected)} rejected by {who}: the constraint CSV is not "
                              f"loaded (registry version {reg.version})")
    return final


def to_json(reg: Registry) -> dict[str, Any]:
    """The registry as plain JSON (for artifacts and `dkg vocab list --json`)."""
    out: dict[str, Any] = json.loads(reg.model_dump_json())
    return out
