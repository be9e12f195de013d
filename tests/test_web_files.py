"""The browser client's files over plain HTTP on the game's port (no browser needed)."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

from server_harness import running_server


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


async def test_the_client_is_served_at_the_root_and_nothing_else_is(postgres_server_url: str) -> None:
    async with running_server(postgres_server_url) as harness:
        base = harness.url.replace("ws://", "http://").rstrip("/")

        async def get(path: str) -> tuple[int, dict[str, str], bytes]:
            # off the event loop that runs the server
            return await asyncio.to_thread(_get, base + path)

        status, headers, body = await get("/")
        assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
        assert b'<script type="module" src="/app.js">' in body
        assert "default-src 'self'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        for path, kind in (
            ("/app.js", "text/javascript"),
            ("/table.js", "text/javascript"),
            ("/style.css", "text/css"),
        ):
            status, headers, body = await get(path)
            assert status == 200 and headers["Content-Type"].startswith(kind), (path, headers)
            assert int(headers["Content-Length"]) == len(body) > 0
        # the JSON subprotocol is what the page speaks
        _, _, app = await get("/app.js")
        assert b'"feltd.json.v1"' in app
        # only the client's own files: no way out of server/web/, nothing else of the package
        for path in ("/../gateway.py", "/static.py", "/web/app.js", "/%2e%2e/app.py", "/nope.js"):
            status, _, _ = await get(path)
            assert status == 404, path
        status, _, body = await get("/healthz")
        assert status == 200 and body == b"ok\n"
