"""rpcweave: the command line and the demo of the rpcweave SDK."""

__all__: list[str] = []
