"""What tests that start `feltd` processes share: the command, a free loopback port, a GET."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import asyncpg


def feltd_command() -> list[str]:
    """The installed console script when there is one (what a person runs), else the module."""
    script = Path(sys.executable).with_name("feltd")
    return [str(script)] if script.exists() else [sys.executable, "-m", "server.cli.main"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def http_get(url: str) -> str:
    """The body of a plain HTTP GET of ``http://HOST:PORT/PATH`` (a server's health port), which
    must answer 200."""
    address, _, path = url.removeprefix("http://").partition("/")
    host, _, port = address.partition(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET /{path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n".encode())
    answer = await reader.read()
    writer.close()
    head, _, body = answer.decode().partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 200"), head
    return body


def bench_databases(server_url: str) -> set[str]:
    """The scratch databases `feltd bench live` makes (and must drop) on that server now."""

    async def names() -> set[str]:
        conn = await asyncpg.connect(server_url)
        try:
            rows = await conn.fetch("SELECT datname FROM pg_database WHERE datname LIKE 'feltd_benchlive%'")
        finally:
            await conn.close()
        return {row["datname"] for row in rows}

    return asyncio.run(names())
