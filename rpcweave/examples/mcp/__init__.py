"""MCP examples: a file server, the conformance servers and clients, OAuth."""
