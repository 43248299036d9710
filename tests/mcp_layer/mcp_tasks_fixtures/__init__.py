"""Fixtures of the MCP task tests: the npm everything server, a stdio task server."""
