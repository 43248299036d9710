"""The bare JSON-RPC core: an echo server over stdio."""
