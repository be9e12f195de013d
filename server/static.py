"""The browser client's files (``server/web/``), served over HTTP on the game's port.

The files are read once, when the gateway starts, from the installed package: only the names
found there are served, so no request path can reach any other file. They are small (tens of
kilobytes), so each is kept in memory with its content type.
"""

from __future__ import annotations

import http
from importlib import resources

from websockets.datastructures import Headers
from websockets.http11 import Response

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}

# The page talks only to the server it came from: scripts, styles and the WebSocket of the same
# origin ('self' covers ws:// and wss:// to the same host in CSP level 3 browsers).
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "style-src 'self'; script-src 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # the client is a handful of small files: always fetch them fresh after an upgrade
    "Cache-Control": "no-cache",
}


class StaticFiles:
    """The web client's files by request path ("/" is ``index.html``)."""

    def __init__(self, package: str = "server", folder: str = "web") -> None:
        self.files: dict[str, tuple[bytes, str]] = {}
        root = resources.files(package).joinpath(folder)
        if not root.is_dir():
            return
        for entry in root.iterdir():
            suffix = "." + entry.name.rsplit(".", 1)[-1] if "." in entry.name else ""
            if entry.is_file() and suffix in CONTENT_TYPES:
                self.files["/" + entry.name] = (entry.read_bytes(), CONTENT_TYPES[suffix])
        if "/index.html" in self.files:
            self.files["/"] = self.files["/index.html"]

    def response(self, path: str) -> Response | None:
        """The file at ``path`` as a 200 response, or ``None`` when there is no such file."""
        found = self.files.get(path)
        if found is None:
            return None
        body, content_type = found
        headers = Headers(
            [("Content-Type", content_type), ("Content-Length", str(len(body))), *SECURITY_HEADERS.items()]
        )
        return Response(http.HTTPStatus.OK.value, http.HTTPStatus.OK.phrase, headers, body)
