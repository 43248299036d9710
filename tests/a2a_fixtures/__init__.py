"""Fixtures for the A2A interop tests: a server built with the official ``a2a-sdk`` and
an ``@a2a-js/sdk`` client script."""
