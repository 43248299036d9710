"""Private modules behind `mcp_layer.types`; import names from there, not from here."""
