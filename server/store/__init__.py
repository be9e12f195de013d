"""PostgreSQL: the record of money and of tournament state.

Everything goes through ``server.store.connection.open_store(database_url=None, data_dir=...)``,
an async context manager that connects (or starts the embedded server in ``data_dir``), applies
the migrations and yields a ``Store`` whose parts share one pool:

- ``store.ledger``       (``ledger.py``)      double-entry money: ``post(transfers) -> PostResult``,
  ``balance``, ``balances``, ``check``; the database itself enforces the invariants.
- ``store.ledger_writer`` (``ledger_writer.py``) the same ``post`` with group commit: concurrent
  callers share one database transaction, each still gets its own result or typed error.
- ``store.players``      (``players.py``)     players and operators, tokens kept as SHA-256.
- ``store.tournaments``  (``tournaments.py``) definitions, status machine, registrations and the
  waiting list, entries, rebuys, results; money attached to a record commits with it.
- ``store.snapshots``    (``snapshots.py``)   ``TableSnapshot`` batches, ``load_latest_state``.
- ``store.histories``    (``histories.py``)   hand histories by id, player, tournament; exports.

``migrations.py`` applies ``migrations/NNNN_*.sql`` (checksummed, in order); ``roles.py`` gives the
server's restricted role (the pool's login) its rights; ``errors.py`` holds the typed errors, all
``StoreException``. This
package's ``__init__`` imports nothing, so importing ``server.store.embedded`` stays cheap.
"""
