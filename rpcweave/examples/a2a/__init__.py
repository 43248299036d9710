"""A2A examples: a coding agent, a research agent that delegates to it, the TCK agent."""
