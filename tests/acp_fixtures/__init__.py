"""Fixtures of the ACP tests: schema checks, SDK scripts (Python and Node)."""
