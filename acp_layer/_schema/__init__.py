"""Private modules of `acp_layer.schema` (and `acp_layer.schema_unstable`), split by topic.

Import from the public modules. Rules for maintainers:

1. One module per protocol topic, each with ``__all__``; the public modules re-export the
   union of those lists, so a new name goes into its module's ``__all__`` and nowhere else.
2. Leniency is declared, never improvised: use the aliases of `_lenient` exactly where
   schema.json carries an ``x-deserialize-*`` hint (the tests check every hint).
3. Model modules do not use ``from __future__ import annotations``: annotations are evaluated
   once at class creation, which keeps ``import acp_layer`` cheaper; define types before use.
4. A tagged union is a ``TypeAlias`` for mypy and a `tagged_union` at runtime, listing the
   same variants in both branches.
"""
