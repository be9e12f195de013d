"""Least privilege: the server's pool connects as a restricted role, not as the database's owner.

The URL a command is given names the *owner* (who applies the migrations). At start-up, as that
owner, ``grant_server_role`` makes the server's role if it is missing (``FELTD_DB_ROLE``, default
``feltd_server``: LOGIN and nothing else; its password is ``FELTD_DB_ROLE_PASSWORD`` when set,
needed wherever the server authenticates passwords) and gives it exactly:

- the ledger (``accounts``, ``ledger_transactions``, ``ledger_entries``): SELECT only; money moves
  only through ``ledger_post``, a SECURITY DEFINER function;
- the fencing tokens (``write_fences``): SELECT only; they move only through ``feltd_fence``
  (SECURITY DEFINER, migration 0013), so a worker cannot lower the token that fences it out;
  ``ledger_post``, ``feltd_fence`` and ``feltd_claim`` are the only functions it may execute;
- every other table (players, tournaments, snapshots, histories, the director's journal): SELECT,
  INSERT, UPDATE, DELETE, and the use of their sequences; never TRUNCATE, TRIGGER or REFERENCES;
- the ledger's id sequences: SELECT (how far they went), never a new id;
- no CREATE anywhere, so it can make no function or trigger of its own; ``schema_migrations``
  read only.

The pool then logs in as that role: there is no ``SET ROLE`` on pooled connections (which a
session could undo). Grants are remade at every start, under the migration lock, so a table a
new migration adds gets its rights, and a right granted by hand is taken back.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass

import asyncpg

from server.store.dbconn import DbConnection
from server.store.errors import RoleSetupError
from server.store.migrations import MIGRATION_LOCK_ID

DEFAULT_ROLE = "feltd_server"
LEDGER_TABLES = ("accounts", "ledger_transactions", "ledger_entries")
LEDGER_FUNCTIONS = ("ledger_post(text[], text[], text[], text[], bigint[])",)
# Tables the role may only read: written through the SECURITY DEFINER functions alone.
FUNCTION_ONLY_TABLES = (*LEDGER_TABLES, "write_fences")
SERVER_FUNCTIONS = (*LEDGER_FUNCTIONS, "feltd_fence(text[], bigint[])", "feltd_claim(text, bigint)")
TIMEOUT_S = 60.0
_LEDGER_ID_SEQUENCES = "ledger_transactions_id_seq, ledger_entries_id_seq"
_ROLE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@dataclass(frozen=True, slots=True)
class ServerRole:
    """The role the server's pool logs in as; ``password`` None logs in without one (trust or
    peer authentication, as the embedded server and most test set-ups use)."""

    name: str = DEFAULT_ROLE
    password: str | None = None

    def __post_init__(self) -> None:
        if not _ROLE_NAME.match(self.name):
            raise RoleSetupError(
                f"server role name {self.name!r} must be lowercase letters, digits and _ (at most 63)"
            )


def server_role_from_env() -> ServerRole:
    """``FELTD_DB_ROLE`` (default ``feltd_server``) and ``FELTD_DB_ROLE_PASSWORD``."""
    return ServerRole(
        os.environ.get("FELTD_DB_ROLE") or DEFAULT_ROLE, os.environ.get("FELTD_DB_ROLE_PASSWORD") or None
    )


async def grant_server_role(conn: DbConnection, role: ServerRole) -> None:
    """As the owner: make ``role`` if missing, then give it exactly its rights (module docstring).
    Raises ``RoleSetupError`` when the owner may not (no CREATEROLE, not the tables' owner)."""
    try:
        await _ensure_role(conn, role)
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK_ID, timeout=TIMEOUT_S)
            await _grant(conn, role.name)
    except asyncpg.PostgresError as error:
        raise RoleSetupError(f"cannot set up the server's database role {role.name!r}: {error}") from error


async def _ensure_role(conn: DbConnection, role: ServerRole) -> None:
    # Roles belong to the whole server, and databases migrate under locks of their own: two
    # start-ups on different databases may race here (duplicate role, "tuple concurrently
    # updated"), so the loser tries again and then finds the role made.
    for attempt in range(5):
        try:
            async with conn.transaction():
                exists = await conn.fetchval(
                    "SELECT rolsuper FROM pg_roles WHERE rolname = $1", role.name, timeout=TIMEOUT_S
                )
                if exists is None:
                    await conn.execute(
                        f'CREATE ROLE "{role.name}" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE '
                        "NOREPLICATION NOBYPASSRLS NOINHERIT",
                        timeout=TIMEOUT_S,
                    )
                elif exists:
                    raise RoleSetupError(
                        f"the server's database role {role.name!r} is a superuser; it must be a plain role"
                    )
                if role.password is not None:
                    statement = await conn.fetchval(
                        "SELECT format('ALTER ROLE %I PASSWORD %L', $1::text, $2::text)",
                        role.name,
                        role.password,
                        timeout=TIMEOUT_S,
                    )
                    await conn.execute(statement, timeout=TIMEOUT_S)
            return
        except (asyncpg.UniqueViolationError, asyncpg.DuplicateObjectError, asyncpg.InternalServerError):
            if attempt == 4:
                raise
            await asyncio.sleep(0.05 * (attempt + 1))


async def _grant(conn: DbConnection, role: str) -> None:
    tables = [
        str(row["name"])
        for row in await conn.fetch(
            """SELECT c.relname AS name FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
                WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1""",
            timeout=TIMEOUT_S,
        )
    ]
    # Sequences of the ledger's tables (their identity columns) stay out of reach.
    sequences = [
        str(row["name"])
        for row in await conn.fetch(
            """SELECT s.relname AS name
                 FROM pg_class AS s JOIN pg_namespace AS n ON n.oid = s.relnamespace
                WHERE n.nspname = 'public' AND s.relkind = 'S'
                  AND NOT EXISTS (SELECT 1 FROM pg_depend AS d JOIN pg_class AS t ON t.oid = d.refobjid
                                   WHERE d.classid = 'pg_class'::regclass AND d.objid = s.oid
                                     AND t.relname = ANY ($1::text[]))
                ORDER BY 1""",
            list(LEDGER_TABLES),
            timeout=TIMEOUT_S,
        )
    ]
    database = await conn.fetchval("SELECT current_database()", timeout=TIMEOUT_S)
    statements = [
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
        f'REVOKE ALL ON SCHEMA public FROM "{role}"',
        f'GRANT USAGE ON SCHEMA public TO "{role}"',
        f'GRANT CONNECT ON DATABASE "{database}" TO "{role}"',
        f'REVOKE ALL ON ALL TABLES IN SCHEMA public FROM "{role}"',
        f'REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM "{role}"',
        "REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC",
        f'REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM "{role}"',
    ]
    for table in tables:
        if table in FUNCTION_ONLY_TABLES or table == "schema_migrations":
            statements.append(f'GRANT SELECT ON "{table}" TO "{role}"')
        else:
            statements.append(f'GRANT SELECT, INSERT, UPDATE, DELETE ON "{table}" TO "{role}"')
    for sequence in sequences:
        statements.append(f'GRANT USAGE, SELECT, UPDATE ON SEQUENCE "{sequence}" TO "{role}"')
    # Reading how far the ledger's ids went (the check's sign of a TRUNCATE), never drawing one.
    statements.append(f'GRANT SELECT ON SEQUENCE {_LEDGER_ID_SEQUENCES} TO "{role}"')
    for function in SERVER_FUNCTIONS:
        statements.append(f'GRANT EXECUTE ON FUNCTION {function} TO "{role}"')
    await conn.execute(";\n".join(statements), timeout=TIMEOUT_S)


__all__ = ["DEFAULT_ROLE", "LEDGER_TABLES", "ServerRole", "grant_server_role", "server_role_from_env"]
