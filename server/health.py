"""A worker's HTTP port (``feltd serve --role worker``): ``GET /healthz`` and ``GET /metrics``, as
the gateway answers them on its WebSocket port, and nothing else. A worker takes no client, so
this is all it listens for: orchestration probes it, Prometheus scrapes it."""

from __future__ import annotations

import asyncio
import contextlib
import http

from server.metrics import Metrics

REQUEST_LIMIT = 8_192  # bytes of request line and headers read before giving up on a caller
TIMEOUT_SECONDS = 5.0


async def serve_health(host: str, port: int, metrics: Metrics) -> asyncio.Server:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(TIMEOUT_SECONDS):
                head = await reader.readuntil(b"\r\n\r\n")
            request_line = head[:REQUEST_LIMIT].split(b"\r\n", 1)[0].decode("latin-1").split()
            path = request_line[1].split("?", 1)[0] if len(request_line) >= 2 else ""
            method = request_line[0] if request_line else ""
            if method != "GET":
                status, body, kind = http.HTTPStatus.METHOD_NOT_ALLOWED, "GET only\n", "text/plain"
            elif path == "/healthz":
                status, body, kind = http.HTTPStatus.OK, "ok\n", "text/plain"
            elif path == "/metrics":
                status, body, kind = http.HTTPStatus.OK, metrics.render(), "text/plain; version=0.0.4"
            else:
                status, body, kind = (
                    http.HTTPStatus.NOT_FOUND,
                    "feltd worker: GET /healthz or /metrics\n",
                    "text/plain",
                )
            data = body.encode()
            writer.write(
                f"HTTP/1.1 {status.value} {status.phrase}\r\nContent-Type: {kind}; charset=utf-8\r\n"
                f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
                + data
            )
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass  # a caller that did not finish its request, or left: nothing to answer
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    return await asyncio.start_server(answer, host, port, limit=REQUEST_LIMIT)
