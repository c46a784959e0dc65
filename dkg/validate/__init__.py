"""Great Expectations gates: every constraint CSV is validated before anything is loaded."""

from dkg.validate.constraints_gate import GateReport, validate_constraint_csv

__all__ = ["GateReport", "validate_constraint_csv"]
