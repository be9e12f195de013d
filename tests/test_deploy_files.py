"""The Docker files are checked by parsing them: no Docker engine runs where these tests run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from server.cli.main import build_parser


def _compose(repo_root: Path) -> dict[str, Any]:
    data = yaml.safe_load((repo_root / "docker-compose.yml").read_text())
    assert isinstance(data, dict), f"compose file should be a mapping, got {type(data).__name__}"
    return data


FELTD_SERVICES = ("gateway", "worker-1", "worker-2")


def test_compose_declares_a_gateway_two_workers_postgres_and_redis(repo_root: Path) -> None:
    services = _compose(repo_root)["services"]
    assert set(services) == {*FELTD_SERVICES, "postgres", "redis"}, sorted(services)
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    for name in FELTD_SERVICES:
        assert services[name]["build"] == ".", name


def test_compose_commands_are_feltd_serve_with_their_roles(repo_root: Path) -> None:
    """Each command is parsed by feltd's own parser: a flag it does not know would fail here."""
    services = _compose(repo_root)["services"]
    parser = build_parser()
    roles = {}
    for name in FELTD_SERVICES:
        command = services[name]["command"]
        assert command[:2] == ["feltd", "serve"], command
        roles[name] = parser.parse_args(command[1:]).role
    assert roles == {"gateway": "gateway", "worker-1": "worker", "worker-2": "worker"}, roles


def test_compose_feltd_waits_for_healthy_services(repo_root: Path) -> None:
    services = _compose(repo_root)["services"]
    for name in FELTD_SERVICES:
        depends = services[name]["depends_on"]
        assert depends == {
            "postgres": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
        }, (name, depends)
    for name in (*FELTD_SERVICES, "postgres", "redis"):
        test = services[name].get("healthcheck", {}).get("test")
        assert test, f"service {name} has no healthcheck"
    for name in FELTD_SERVICES:  # both roles answer GET /healthz on their port
        assert "/healthz" in " ".join(services[name]["healthcheck"]["test"]), name


def test_compose_wires_urls_ports_and_volume(repo_root: Path) -> None:
    compose = _compose(repo_root)
    services = compose["services"]
    for name in FELTD_SERVICES:
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgresql://") and "@postgres:5432/" in env["DATABASE_URL"]
        assert env["REDIS_URL"].startswith("redis://redis:6379"), env["REDIS_URL"]
        assert env["FELTD_HOST"] == "0.0.0.0", (name, env)  # a container listens beyond its loopback
    assert "8765:8765" in services["gateway"]["ports"], services["gateway"]["ports"]
    for name in ("worker-1", "worker-2"):  # clients reach the gateway only
        assert "ports" not in services[name], name
    volumes = services["postgres"]["volumes"]
    assert any(v.startswith("pgdata:") for v in volumes), volumes
    assert "pgdata" in compose["volumes"]


def test_serve_takes_host_and_port_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FELTD_HOST", "0.0.0.0")
    monkeypatch.setenv("FELTD_PORT", "9100")
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port) == ("0.0.0.0", 9100)


def test_dockerfile_runs_feltd_serve_as_non_root_with_healthcheck(repo_root: Path) -> None:
    lines = [line.strip() for line in (repo_root / "Dockerfile").read_text().splitlines()]
    instructions = [line.split()[0] for line in lines if line and not line.startswith("#")]
    base = next(line for line in lines if line.startswith("FROM"))
    assert base.endswith("-slim"), base
    assert "HEALTHCHECK" in instructions
    user_lines = [line for line in lines if line.startswith("USER ")]
    assert user_lines and user_lines[-1] != "USER root", user_lines
    assert lines[-1] == 'CMD ["feltd", "serve"]', lines[-1]
