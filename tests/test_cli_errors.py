"""What a newcomer meets: every bad input through the real `feltd` command, as a person types it.

Each bad input must give exactly one line on stderr, naming the command and what was wrong, no
traceback, a non-zero exit status, and must leave nothing behind: no file or folder in the
working directory, no data folder, no table in the database it was pointed at. A closed output
pipe exits quietly; Ctrl-C stops `feltd demo` at once, and the next run finishes its tournament.
"""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from processes import feltd_command, free_port

from server.store.connection import open_store
from server.store.databases import create_database, drop_database
from server.store.tournaments import TournamentStatus

BAD_INPUT, UNAVAILABLE, INTERRUPTED, BROKEN_PIPE = 2, 3, 130, 141
REPO = Path(__file__).resolve().parent.parent


def _env(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("FELTD_TRACEBACK", None)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def feltd(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*feltd_command(), *args],
        cwd=cwd,
        env=dict(env) if env is not None else _env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], status: int, *fragments: str) -> str:
    """Exit ``status``, one stderr line that starts with the command's name and holds ``fragments``."""
    assert "Traceback" not in result.stderr, f"a traceback reached the user:\n{result.stderr}"
    lines = result.stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{result.stderr}"
    assert result.returncode == status, (
        f"expected exit {status}, got {result.returncode}: {result.stderr.strip()}"
    )
    line = lines[0]
    assert line.startswith("feltd"), f"the line should name the command: {line!r}"
    for fragment in fragments:
        assert fragment in line, f"expected {fragment!r} in {line!r}"
    return line


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """An empty working directory that must still be empty afterwards (no feltd-data, no output)."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    yield folder
    left = sorted(path.name for path in folder.iterdir())
    assert left == [], f"a refused command left {left} in its working directory"


@pytest.fixture
async def empty_db(postgres_server_url: str) -> AsyncIterator[str]:
    """A fresh database with no tables; a refused command must leave it so."""
    url = await create_database(postgres_server_url, "feltd_test_cli_errors")
    try:
        yield url
    finally:
        await drop_database(postgres_server_url, url)


async def _table_count(url: str) -> int:
    conn = await asyncpg.connect(url, timeout=30)
    try:
        count: int = await conn.fetchval("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        return count
    finally:
        await conn.close()


def _with_user(url: str, user: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, f"{user}@{host}", parts.path, parts.query, parts.fragment))


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


# --- database URLs: --database-url and DATABASE_URL ------------------------------------------

# Every command that opens the database, with arguments that would work against a good one.
DATABASE_COMMANDS = {
    "demo": ("demo", "--players", "10"),
    "admin ledger check": ("admin", "ledger", "check"),
    "admin player show": ("admin", "player", "show", "nobody"),
    "bench store": ("bench", "store", "--transfers", "10"),
}


@dataclass(frozen=True)
class BadUrl:
    name: str
    status: int
    fragment: str


BAD_URLS = (
    BadUrl("refused", UNAVAILABLE, "connection refused"),
    BadUrl("unknown role", UNAVAILABLE, "does not exist"),
    BadUrl("unknown database", UNAVAILABLE, "does not exist"),
    BadUrl("not a URL", BAD_INPUT, "is not a PostgreSQL URL"),
)


def _bad_url(kind: str, server_url: str) -> str:
    if kind == "refused":
        return f"postgresql://postgres:s3cret@127.0.0.1:{free_port()}/feltd"
    if kind == "unknown role":
        return _with_user(server_url, f"feltd_no_role_{uuid.uuid4().hex[:8]}")
    if kind == "unknown database":
        return _with_database(server_url, f"feltd_no_db_{uuid.uuid4().hex[:8]}")
    return "localhost:5432/feltd"


# Every bad URL through every command as --database-url; as DATABASE_URL through one command
# each (the same code reads both), to keep the run short.
URL_CASES = [(command, "--database-url") for command in sorted(DATABASE_COMMANDS)] + [
    ("admin ledger check", "DATABASE_URL")
]


@pytest.mark.parametrize(("command", "given_as"), URL_CASES)
@pytest.mark.parametrize("bad", BAD_URLS, ids=lambda bad: bad.name)
def test_an_unusable_database_url_is_one_line_and_creates_nothing(
    command: str, bad: BadUrl, given_as: str, postgres_server_url: str, workdir: Path
) -> None:
    url = _bad_url(bad.name, postgres_server_url)
    args = DATABASE_COMMANDS[command]
    if given_as == "--database-url":
        result = feltd(*args, "--database-url", url, cwd=workdir)
        source = "--database-url" if bad.status == BAD_INPUT else ""
    else:
        result = feltd(*args, cwd=workdir, env=_env(DATABASE_URL=url))
        source = "$DATABASE_URL" if bad.status == BAD_INPUT else ""
    line = assert_one_line_error(result, bad.status, f"feltd {command}", bad.fragment, source)
    assert "s3cret" not in line + result.stdout, "a password was printed"
    if bad.name == "unknown database":
        assert urlsplit(url).path.lstrip("/") in line, f"the line should name the database: {line}"
    if bad.status == UNAVAILABLE:  # it got as far as saying which database it tried
        assert f"database: {url.replace('s3cret', '***')} (from " in result.stdout, result.stdout


async def test_an_unknown_database_is_not_created_by_the_attempt(
    postgres_server_url: str, workdir: Path
) -> None:
    name = f"feltd_no_db_{uuid.uuid4().hex[:8]}"
    result = feltd(
        "demo", "--players", "10", "--database-url", _with_database(postgres_server_url, name), cwd=workdir
    )
    assert_one_line_error(result, UNAVAILABLE, f'database "{name}" does not exist')
    conn = await asyncpg.connect(postgres_server_url, timeout=30)
    try:
        exists = await conn.fetchval("SELECT count(*) FROM pg_database WHERE datname = $1", name)
    finally:
        await conn.close()
    assert exists == 0, f"database {name} was created by a refused command"


# --- the embedded server's --data-dir -------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "fragment"),
    [
        ("a file", "is a file, not a folder"),
        ("missing parent", "its parent folder"),
        ("foreign pg folder", "not PostgreSQL data"),
    ],
)
@pytest.mark.parametrize("command", sorted(DATABASE_COMMANDS))
def test_a_bad_data_dir_is_one_line_and_creates_nothing(
    command: str, kind: str, fragment: str, tmp_path: Path, workdir: Path
) -> None:
    if kind == "a file":
        data_dir = tmp_path / "a-file"
        data_dir.write_text("not a folder\n")
    elif kind == "missing parent":
        data_dir = tmp_path / "no-such-parent" / "data"
    else:
        data_dir = tmp_path / "someone-elses"
        (data_dir / "pg").mkdir(parents=True)
        (data_dir / "pg" / "notes.txt").write_text("mine\n")
    before = sorted(str(path) for path in tmp_path.rglob("*"))
    result = feltd(
        *DATABASE_COMMANDS[command], "--data-dir", str(data_dir), cwd=workdir, env=_env(DATABASE_URL=None)
    )
    assert_one_line_error(result, BAD_INPUT, f"feltd {command}", fragment)
    after = sorted(str(path) for path in tmp_path.rglob("*"))
    assert after == before, f"a refused command changed {tmp_path}: {sorted(set(after) ^ set(before))}"


def test_a_data_dir_whose_server_cannot_start_is_one_line(tmp_path: Path, workdir: Path) -> None:
    """A pg folder that claims to be PostgreSQL data but is not: the embedded server's own failure
    (many lines of server log) is told in one line that names the folder and the reason."""
    pgdata = tmp_path / "broken" / "pg"
    pgdata.mkdir(parents=True)
    (pgdata / "PG_VERSION").write_text("16\n")
    result = feltd(
        "admin", "ledger", "check", "--data-dir", str(pgdata.parent), cwd=workdir, env=_env(DATABASE_URL=None)
    )
    assert_one_line_error(result, UNAVAILABLE, "the embedded PostgreSQL could not start in", str(pgdata))


# --- feltd demo: nothing made before its inputs are checked ---------------------------------


def _latin1_config(folder: Path) -> Path:
    path = folder / "café.toml"
    path.write_bytes('id = "café"\nname = "Café freezeout"\n'.encode("latin-1"))
    return path


async def test_demo_with_one_player_creates_no_data_dir_and_no_table(
    empty_db: str, tmp_path: Path, workdir: Path
) -> None:
    data_dir = tmp_path / "x"
    embedded = feltd(
        "demo", "--players", "1", "--data-dir", str(data_dir), cwd=workdir, env=_env(DATABASE_URL=None)
    )
    assert_one_line_error(embedded, BAD_INPUT, "feltd demo", "--players", "at least 2, got 1")
    assert not data_dir.exists(), f"{data_dir} was created for a demo that cannot run"

    given = feltd("demo", "--players", "1", "--database-url", empty_db, cwd=workdir)
    assert_one_line_error(given, BAD_INPUT, "--players")
    assert await _table_count(empty_db) == 0, "the demo migrated a database before checking its inputs"


async def test_demo_with_a_non_utf8_config_creates_nothing(
    empty_db: str, tmp_path: Path, workdir: Path
) -> None:
    config = _latin1_config(tmp_path)
    result = feltd("demo", "--config", str(config), "--database-url", empty_db, cwd=workdir)
    assert_one_line_error(result, BAD_INPUT, "feltd demo", "café.toml", "not UTF-8", "0xe9")
    assert await _table_count(empty_db) == 0


async def test_demo_with_more_players_than_its_config_takes_creates_nothing(
    empty_db: str, workdir: Path
) -> None:
    config = REPO / "examples" / "freezeout-10min.toml"  # max_players = 180
    result = feltd(
        "demo", "--config", str(config), "--players", "181", "--database-url", empty_db, cwd=workdir
    )
    assert_one_line_error(result, BAD_INPUT, "feltd demo", "at most 180 players")
    assert await _table_count(empty_db) == 0


def test_demo_says_which_database_it_really_uses(empty_db: str, workdir: Path) -> None:
    """With DATABASE_URL set and no flag, the demo uses DATABASE_URL and says so (it once claimed
    the embedded server while writing to DATABASE_URL)."""
    result = feltd("demo", "--players", "12", "--speed", "200", cwd=workdir, env=_env(DATABASE_URL=empty_db))
    assert result.returncode == 0, result.stderr
    assert f"database: {empty_db} (from $DATABASE_URL)" in result.stdout, result.stdout
    assert "embedded PostgreSQL in" not in result.stdout, result.stdout


# --- the ledger: an idempotency conflict -----------------------------------------------------


def test_an_idempotency_conflict_is_one_line_and_moves_no_money(empty_db: str, workdir: Path) -> None:
    db = ("--database-url", empty_db)
    assert feltd("admin", "player", "add", "ann", "--deposit", "100", *db, cwd=workdir).returncode == 0
    first = feltd("admin", "player", "deposit", "ann", "500", "--key", "desk:7", *db, cwd=workdir)
    assert first.returncode == 0, first.stderr
    conflict = feltd("admin", "player", "deposit", "ann", "600", "--key", "desk:7", *db, cwd=workdir)
    assert_one_line_error(conflict, BAD_INPUT, "feltd admin player deposit", "desk:7", "500", "600")
    shown = feltd("admin", "player", "show", "ann", *db, cwd=workdir)
    assert "balance: 600" in shown.stdout, f"the refused deposit moved money: {shown.stdout}"


# --- files: non-UTF-8 inputs, outputs that exist or cannot be made ---------------------------


def test_a_non_utf8_config_for_simulate_tournament_is_one_line(tmp_path: Path, workdir: Path) -> None:
    config = _latin1_config(tmp_path)
    result = feltd("simulate", "tournament", "--players", "10", "--config", str(config), cwd=workdir)
    assert_one_line_error(result, BAD_INPUT, "feltd simulate tournament", "café.toml", "not UTF-8")


def test_a_non_utf8_phh_file_is_one_line(tmp_path: Path, workdir: Path) -> None:
    hand = tmp_path / "hand.phh"
    hand.write_bytes('variant = "NT"\nplayers = ["Jos\xe9"]\n'.encode("latin-1"))
    result = feltd("phh", "replay", str(hand), cwd=workdir)
    # exit 1: phh replay's "a file could not be read" status; its summary stays on stdout
    assert_one_line_error(result, 1, "feltd phh replay", "hand.phh", "not UTF-8")
    assert "0 hands in 1 files" in result.stdout, result.stdout


def test_a_missing_phh_file_is_one_line(workdir: Path) -> None:
    result = feltd("phh", "replay", "no-such.phh", cwd=workdir)
    assert_one_line_error(result, BAD_INPUT, "feltd phh replay", "no-such.phh", "no such file")


@pytest.mark.parametrize(
    ("flag", "kind", "fragment"),
    [
        ("--phh-out", "non-empty folder", "is not empty"),
        ("--phh-out", "a file", "is not a folder"),
        ("--phh-out", "missing parent", "does not exist"),
        ("--transfers-out", "a file", "exists already"),
        ("--transfers-out", "missing parent", "does not exist"),
    ],
)
def test_an_output_path_that_exists_or_cannot_be_made_is_refused_before_work(
    flag: str, kind: str, fragment: str, tmp_path: Path, workdir: Path
) -> None:
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    if kind == "non-empty folder":
        target = outputs / "hands"
        target.mkdir()
        (target / "keep.txt").write_text("keep\n")
    elif kind == "a file":
        target = outputs / "taken"
        target.write_text("keep\n")
    else:
        target = outputs / "missing" / "out"
    before = {path: path.read_bytes() for path in outputs.rglob("*") if path.is_file()}
    if flag == "--phh-out":
        args = ("simulate", "hands", "--count", "50", flag, str(target))
    else:
        args = ("simulate", "tournament", "--players", "30", flag, str(target))
    result = feltd(*args, cwd=workdir)
    assert_one_line_error(result, BAD_INPUT, f"feltd {args[0]} {args[1]}", str(target), fragment)
    assert result.stdout == "", f"work started before the output was checked:\n{result.stdout}"
    after = {path: path.read_bytes() for path in outputs.rglob("*") if path.is_file()}
    assert after == before, "a refused command wrote into the output location"
    assert not (outputs / "missing").exists()


# --- numbers argparse refuses, in one line ---------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ("bench", "store", "--connections", "0"),
            "--connections: must be a whole number of at least 1, got 0",
        ),
        (("demo", "--players", "1"), "--players: must be a whole number of at least 2, got 1"),
        (("demo", "--players", "many"), "--players: must be a whole number of at least 2, got 'many'"),
        (("simulate", "hands", "--players", "11"), "--players: must be 2..10, got 11"),
        (("admin", "player", "deposit", "ann", "0"), "CENTS: must be a whole number of at least 1, got 0"),
        (
            ("admin", "player", "add", "ann", "--deposit", "-5"),
            "--deposit: must be a whole number of at least 0",
        ),
        (("shuffle-up-and-deal",), "invalid choice: 'shuffle-up-and-deal'"),
        (("simulate", "hands", "--no-such-flag"), "unrecognized arguments: --no-such-flag"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else None,
)
def test_a_bad_flag_value_is_one_line_before_anything_runs(
    args: tuple[str, ...], fragment: str, workdir: Path
) -> None:
    result = feltd(*args, cwd=workdir, env=_env(DATABASE_URL=None))
    assert_one_line_error(result, BAD_INPUT, fragment, "--help")
    assert result.stdout == "", result.stdout


# --- a closed pipe, Ctrl-C -------------------------------------------------------------------


def _read_one_line_then_close(args: tuple[str, ...], cwd: Path) -> tuple[int, str, str]:
    """Like `feltd ... | head -1`: read one line, close the pipe, let feltd find out."""
    process = subprocess.Popen(
        [*feltd_command(), *args],
        cwd=cwd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read()
    return process.wait(timeout=120), first, stderr


def test_a_closed_pipe_exits_quietly(workdir: Path) -> None:
    args = ("simulate", "tournament", "--players", "300", "--progress-every", "1")
    status, first, stderr = _read_one_line_then_close(args, workdir)
    assert first, "feltd printed nothing before the pipe closed"
    assert stderr == "", f"a closed pipe must exit quietly, got:\n{stderr}"
    assert status == BROKEN_PIPE, f"expected exit {BROKEN_PIPE} (128 + SIGPIPE), got {status}"


def test_a_closed_pipe_stops_the_demo_quietly(empty_db: str, workdir: Path) -> None:
    args = ("demo", "--players", "400", "--progress-every", "1", "--database-url", empty_db)
    status, first, stderr = _read_one_line_then_close(args, workdir)
    assert first.startswith("feltd demo:"), first
    assert stderr == "", f"a closed pipe must exit quietly, got:\n{stderr}"
    assert status == BROKEN_PIPE, status


def _as_at_a_terminal() -> None:
    """In the child: Ctrl-C's default, as a terminal's foreground job has it. A test run started
    in the background (`cmd &` in a script) hands its children SIGINT ignored, and a program that
    starts with SIGINT ignored rightly keeps ignoring it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def test_ctrl_c_stops_the_demo_at_once_and_the_next_run_settles_its_tournament(
    empty_db: str, workdir: Path
) -> None:
    """Ctrl-C while the demo's tournament is being played: one line, exit 130, no standings. The
    next run cancels the tournament left running (CANCEL-1 returns its money), plays its own to
    the end, and the ledger balances."""
    args = ("demo", "--players", "40", "--speed", "100", "--progress-every", "1", "--database-url", empty_db)
    process = subprocess.Popen(
        [*feltd_command(), *args],
        cwd=workdir,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_at_a_terminal,
    )
    assert process.stdout is not None
    seen = []
    for line in process.stdout:
        seen.append(line)
        if "players left" in line:  # the tournament is being played
            break
    process.send_signal(signal.SIGINT)
    rest, stderr = process.communicate(timeout=60)
    output = "".join(seen) + rest
    assert process.returncode == INTERRUPTED, (process.returncode, stderr)
    assert stderr == "feltd demo: interrupted\n", stderr
    assert "final standings" not in output, f"the demo played on to the end after Ctrl-C:\n{output}"
    async with open_store(empty_db) as store:
        assert (await store.tournaments.get("demo-1")).status is TournamentStatus.RUNNING

    again = feltd(
        "demo", "--players", "12", "--speed", "200", "--database-url", empty_db, cwd=workdir, timeout=300
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "tournament demo-1, left running by an earlier run: cancelled" in again.stdout, again.stdout
    assert "tournament demo-2: finished" in again.stdout, again.stdout
    async with open_store(empty_db) as store:
        history = await store.tournaments.status_history("demo-2")
        left = await store.tournaments.get("demo-1")
        check = await store.ledger.check()
    assert left.status is TournamentStatus.CANCELLED
    assert [to for _, to in history][-2:] == [TournamentStatus.RUNNING, TournamentStatus.FINISHED], history
    assert check.ok, check.problems


# --- what every command says about itself ----------------------------------------------------


def test_version_names_the_installed_feltd(workdir: Path) -> None:
    result = feltd("--version", cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"feltd {version('feltd')}", result.stdout


LEAVES = (
    ("demo",),
    ("bots",),
    ("simulate", "hands"),
    ("simulate", "tournament"),
    ("phh", "replay"),
    ("bench", "engine"),
    ("bench", "store"),
    ("admin", "player", "add"),
    ("admin", "player", "deposit"),
    ("admin", "ledger", "check"),
)


@pytest.mark.parametrize("leaf", LEAVES, ids=" ".join)
def test_help_shows_every_default(leaf: tuple[str, ...], workdir: Path) -> None:
    from server.cli.main import build_parser

    parser = build_parser()
    for word in leaf:  # walk the tree to the leaf's parser
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        parser = sub.choices[word]  # type: ignore[attr-defined]
    result = feltd(*leaf, "--help", cwd=workdir)
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    for action in parser._actions:
        if action.option_strings and action.default not in (None, False, "==SUPPRESS=="):
            shown = f"(default: {action.default})" in text or "default:" in (action.help or "")
            assert shown, f"{' '.join(leaf)} {action.option_strings[0]}: default {action.default!r} not shown"


@pytest.mark.parametrize(
    ("leaf", "flag"),
    [(("admin", "player", "add"), "--deposit CENTS"), (("admin", "player", "deposit"), "CENTS")],
)
def test_help_names_money_in_cents(leaf: tuple[str, ...], flag: str, workdir: Path) -> None:
    result = feltd(*leaf, "--help", cwd=workdir)
    assert flag in result.stdout and "cents" in result.stdout, result.stdout


def test_every_database_command_says_which_database_it_uses(empty_db: str, workdir: Path) -> None:
    runs = {
        "admin ledger check": feltd("admin", "ledger", "check", "--database-url", empty_db, cwd=workdir),
        "admin player add": feltd(
            "admin", "player", "add", "cy", cwd=workdir, env=_env(DATABASE_URL=empty_db)
        ),
        "bench store": feltd(
            "bench", "store", "--transfers", "20", "--writer-callers", "2", "--tables", "2", "--rounds", "1",
            "--connections", "1", "--in-place", "--database-url", empty_db, cwd=workdir,
        ),
    }  # fmt: skip
    for name, result in runs.items():
        assert result.returncode == 0, f"{name}: {result.stderr}"
        source = "$DATABASE_URL" if name == "admin player add" else "--database-url"
        assert f"database: {empty_db} (from {source})" in result.stdout, f"{name}:\n{result.stdout}"


def test_feltd_traceback_shows_what_is_behind_the_line(workdir: Path) -> None:
    """For a bug report: FELTD_TRACEBACK=1 lets the traceback of a known error through."""
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/feltd"
    result = feltd(
        "admin", "ledger", "check", "--database-url", url, cwd=workdir, env=_env(FELTD_TRACEBACK="1")
    )
    assert result.returncode != 0
    assert "Traceback" in result.stderr and "DatabaseUnavailable" in result.stderr, result.stderr
