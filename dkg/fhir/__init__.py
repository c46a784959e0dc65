"""Guideline versions as FHIR R4 (CPG-on-FHIR PlanDefinitions, ActivityDefinitions, a CQL Library), their
offline validation, and the CDS Hooks view of a patient."""
