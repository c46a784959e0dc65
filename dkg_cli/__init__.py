"""The ``dkg`` command line: services, flows and queries from a terminal."""
