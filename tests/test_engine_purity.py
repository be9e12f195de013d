"""DESIGN.md: the engine has no asyncio, no sockets, no wall clock and no global random state.

Checked on the source, so a new module cannot slip past: every import and every ``random.<name>``
use under ``engine/`` is inspected.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

FORBIDDEN_MODULES = {"asyncio", "socket", "time", "threading", "subprocess", "selectors", "ssl"}
# ``random.Random`` (a seeded generator) and ``random.SystemRandom`` (the OS CSPRNG) are injected
# objects; any other ``random.<name>`` is the module's hidden global state.
ALLOWED_RANDOM = {"Random", "SystemRandom"}
WALL_CLOCK_CALLS = {("datetime", "now"), ("datetime", "utcnow"), ("datetime", "today"), ("date", "today")}


def _engine_modules(repo_root: Path) -> list[Path]:
    return sorted((repo_root / "engine").rglob("*.py"))


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in FORBIDDEN_MODULES:
                    found.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").split(".")[0]
            if module in FORBIDDEN_MODULES:
                found.append(f"line {node.lineno}: from {node.module} import ...")
            if module == "random":
                found.extend(
                    f"line {node.lineno}: from random import {alias.name}"
                    for alias in node.names
                    if alias.name not in ALLOWED_RANDOM
                )
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "random" and node.attr not in ALLOWED_RANDOM:
                found.append(f"line {node.lineno}: random.{node.attr} (global random state)")
            if (node.value.id, node.attr) in WALL_CLOCK_CALLS:
                found.append(f"line {node.lineno}: {node.value.id}.{node.attr} (wall clock)")
    return found


def test_engine_has_modules_to_check(repo_root: Path) -> None:
    names = {path.name for path in _engine_modules(repo_root)}
    assert {"hand.py", "evaluator.py", "table.py", "balancing.py"} <= names, sorted(names)


@pytest.mark.parametrize("module", ["hand.py", "table.py", "tournament/simulation.py", "clock.py"])
def test_engine_module_is_pure(repo_root: Path, module: str) -> None:
    path = repo_root / "engine" / module
    assert not _violations(path), f"{module}: {_violations(path)}"


def test_no_engine_module_imports_io_clock_or_global_random(repo_root: Path) -> None:
    offenders = {
        str(path.relative_to(repo_root)): problems
        for path in _engine_modules(repo_root)
        if (problems := _violations(path))
    }
    assert not offenders, f"engine modules breaking DESIGN.md's purity: {offenders}"


def test_the_checker_catches_what_it_forbids(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import asyncio\nimport random\nfrom time import time\nfrom datetime import datetime\n"
        "x = random.random()\ny = datetime.now()\nz = random.Random(1)\n"
    )
    problems = _violations(bad)
    assert len(problems) == 4, problems
    assert any("asyncio" in p for p in problems) and any("random.random" in p for p in problems)
    assert any("datetime.now" in p for p in problems) and any("time" in p for p in problems)


def test_engine_imports_no_server_or_protocol_code(repo_root: Path) -> None:
    """STYLE.md: dependencies point inward; the engine imports nothing of ours outside itself."""
    offenders = []
    for path in _engine_modules(repo_root):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            outside = {"server", "protocol", "client"}
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in outside]
    assert not offenders, offenders
