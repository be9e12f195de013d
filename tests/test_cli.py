"""The `feltd` command line: every subcommand listed, clear errors for what it does not know."""

from __future__ import annotations

import subprocess
import sys

import pytest

from server.cli.main import main


def _feltd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli.main", *args], capture_output=True, text=True, timeout=60
    )


def test_help_lists_every_subcommand() -> None:
    result = _feltd("--help")
    assert result.returncode == 0, result.stderr
    for name in ("serve", "demo", "bots", "simulate", "phh", "bench", "admin"):
        assert f"    {name}" in result.stdout, f"{name!r} missing from:\n{result.stdout}"


@pytest.mark.parametrize(
    ("group", "leaves"),
    [
        ("simulate", ("hands", "tournament")),
        ("bench", ("engine", "store", "live")),
        ("admin", ("player", "ledger")),
    ],
)
def test_group_help_lists_its_commands(group: str, leaves: tuple[str, ...]) -> None:
    result = _feltd(group, "--help")
    assert result.returncode == 0, result.stderr
    for leaf in leaves:
        assert leaf in result.stdout, f"{group} {leaf} missing from:\n{result.stdout}"


def test_unknown_subcommand_is_a_clear_error() -> None:
    result = _feltd("shuffle-up-and-deal")
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "invalid choice: 'shuffle-up-and-deal'" in result.stderr, result.stderr


def test_bad_flag_is_a_clear_error() -> None:
    result = _feltd("simulate", "hands", "--no-such-flag")
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "unrecognized arguments: --no-such-flag" in result.stderr, result.stderr


def test_missing_subcommand_is_an_error() -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
