"""`feltd connect`, the protocol console, as a person runs it against a real server."""

from __future__ import annotations

import asyncio
import json

from processes import feltd_command
from server_harness import running_server, tournament_toml


async def _line(stream: asyncio.StreamReader) -> str:
    return (await asyncio.wait_for(stream.readline(), 20)).decode()


async def test_connect_prints_server_messages_as_json_and_sends_typed_lines(postgres_server_url: str) -> None:
    """A player logs in with a token, registers with ``--register``, reads the lobby after typing
    ``lobby_subscribe``; a line that is not a client message is refused on stderr, not sent."""
    async with running_server(postgres_server_url, speed=1.0) as harness:
        await harness.add_players(["ann"], cents=50_000)
        tournament_id = await harness.create(tournament_toml("console", players=9), starts_in=3600)
        process = await asyncio.create_subprocess_exec(
            *feltd_command(),
            "connect",
            harness.url,
            "--token",
            harness.tokens["ann"],
            "--register",
            tournament_id,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        try:
            welcome = json.loads(await _line(process.stdout))
            assert welcome["type"] == "welcome" and welcome["player"] == "ann"
            seen: list[dict[str, object]] = []
            while not any(m["type"] == "ack" for m in seen):
                seen.append(json.loads(await _line(process.stdout)))
            registration = next(m for m in seen if m["type"] == "registration")
            assert registration["status"] == "registered"
            assert {"type": "balance", "cents": 50_000 - 1_100} in seen  # buy-in 1000 + fee 100

            process.stdin.write(b'{"type": "act", "table_id": "one"}\n{"type": "lobby_subscribe"}\n')
            await process.stdin.drain()
            refusal = await _line(process.stderr)
            assert refusal.startswith("feltd connect: not sent:") and "table_id" in refusal, refusal
            lobby = json.loads(await _line(process.stdout))
            assert lobby["type"] == "lobby", lobby
            (entry,) = lobby["tournaments"]
            assert entry["tournament_id"] == tournament_id and entry["entrants"] == 1
        finally:
            process.kill()
            await process.wait()
