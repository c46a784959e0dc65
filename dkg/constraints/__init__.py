"""Patient constraints from box texts: CoreNLP constituency parse + rules + a vocabulary file."""

from dkg.constraints.models import AnyOf, Constraint, Item, items_from_json, items_to_json

__all__ = ["AnyOf", "Constraint", "Item", "items_from_json", "items_to_json"]
