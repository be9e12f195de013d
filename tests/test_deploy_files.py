"""The Docker files are checked by parsing them: no Docker engine runs where these tests run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def _compose(repo_root: Path) -> dict[str, Any]:
    data = yaml.safe_load((repo_root / "docker-compose.yml").read_text())
    assert isinstance(data, dict), f"compose file should be a mapping, got {type(data).__name__}"
    return data


def test_compose_declares_feltd_postgres_and_redis(repo_root: Path) -> None:
    services = _compose(repo_root)["services"]
    assert set(services) == {"feltd", "postgres", "redis"}, sorted(services)
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    assert services["feltd"]["build"] == "."


def test_compose_feltd_waits_for_healthy_services(repo_root: Path) -> None:
    services = _compose(repo_root)["services"]
    depends = services["feltd"]["depends_on"]
    assert depends == {
        "postgres": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
    }, depends
    for name in ("feltd", "postgres", "redis"):
        test = services[name].get("healthcheck", {}).get("test")
        assert test, f"service {name} has no healthcheck"


def test_compose_wires_urls_ports_and_volume(repo_root: Path) -> None:
    compose = _compose(repo_root)
    feltd = compose["services"]["feltd"]
    env = feltd["environment"]
    assert env["DATABASE_URL"].startswith("postgresql://") and "@postgres:5432/" in env["DATABASE_URL"]
    assert env["REDIS_URL"].startswith("redis://redis:6379"), env["REDIS_URL"]
    assert "8765:8765" in feltd["ports"], feltd["ports"]
    volumes = compose["services"]["postgres"]["volumes"]
    assert any(v.startswith("pgdata:") for v in volumes), volumes
    assert "pgdata" in compose["volumes"]


def test_dockerfile_runs_feltd_serve_as_non_root_with_healthcheck(repo_root: Path) -> None:
    lines = [line.strip() for line in (repo_root / "Dockerfile").read_text().splitlines()]
    instructions = [line.split()[0] for line in lines if line and not line.startswith("#")]
    base = next(line for line in lines if line.startswith("FROM"))
    assert base.endswith("-slim"), base
    assert "HEALTHCHECK" in instructions
    user_lines = [line for line in lines if line.startswith("USER ")]
    assert user_lines and user_lines[-1] != "USER root", user_lines
    assert lines[-1] == 'CMD ["feltd", "serve"]', lines[-1]
