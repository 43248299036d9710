"""rpcweave: the command line (``rpcweave``, ``python -m rpcweave``) and the demo of the SDK.

Everything here is private but `__main__.main`; the trace renderer the commands use lives in
`jsonrpc_core` (`trace_to_mermaid`, `trace_to_html`), since any protocol's recording needs it.
"""

__all__: list[str] = []
