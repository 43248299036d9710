"""PostgreSQL for servers that share state across processes (``pip install 'rpcweave[postgres]'``).

`PostgresEventStore` keeps Streamable HTTP streams resumable on any replica. The rest is
the plumbing the layers' stores build on (A2A's task store, MCP's subscription bus):
versioned schemas (`Migration`, `migrate`, `migrate_sync`, `SchemaTooNew`), a pooled
store base (`PooledStore`) and a LISTEN connection that survives reconnects
(`Listener`, `listen_statement`, `NOTIFY_LIMIT`). Each name loads on first use; loading
one imports the driver, psycopg 3.
"""

from typing import TYPE_CHECKING

from jsonrpc_core import install_lazy_exports

if TYPE_CHECKING or not install_lazy_exports(globals()):
    from ._pg import NOTIFY_LIMIT as NOTIFY_LIMIT
    from ._pg import Listener as Listener
    from ._pg import Migration as Migration
    from ._pg import PooledStore as PooledStore
    from ._pg import SchemaTooNew as SchemaTooNew
    from ._pg import listen_statement as listen_statement
    from ._pg import migrate as migrate
    from ._pg import migrate_sync as migrate_sync
    from ._pg_event_store import PostgresEventStore as PostgresEventStore
