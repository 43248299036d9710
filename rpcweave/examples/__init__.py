"""rpcweave's examples, installed with the package (``examples/`` in a checkout links here).

Each one is a program: ``python -m rpcweave.examples.mcp.file_server ROOT``, or by its
path, which ``rpcweave example NAME`` prints (``rpcweave example`` lists them all).
"""
