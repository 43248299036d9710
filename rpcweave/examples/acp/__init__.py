"""ACP examples: the demo coding agent."""
