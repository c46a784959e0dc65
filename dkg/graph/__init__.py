"""The Decision Knowledge Graph in Neo4j: static content, a decision layer, versions and changes."""
