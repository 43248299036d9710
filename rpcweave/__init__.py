"""rpcweave: the command line (``rpcweave``, ``python -m rpcweave``) and the demo of the SDK.

Everything here is private but `__main__.main`, including the renderers of a ``--trace``
recording (`_trace_render.trace_to_mermaid`, `_trace_html.trace_to_html`): the recording is
JSON-RPC's (`jsonrpc_core.WireTap`), drawing it is the command line's job.
"""

__all__: list[str] = []
