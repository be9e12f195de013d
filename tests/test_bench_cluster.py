"""`feltd bench live --workers 2 --gateways 1` at a tiny size: a gateway and two worker processes
over a Redis and a scratch PostgreSQL database, load generators in their own processes. Only that
the figures come out is checked, never how fast: the machine's speed varies."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

from processes import bench_databases


def test_bench_live_with_two_workers_and_a_gateway_prints_every_figure(
    postgres_server_url: str, redis_url: str, tmp_path: Path
) -> None:
    rows_file = tmp_path / "rows.json"
    databases_before = bench_databases(postgres_server_url)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.cli.main",
            "bench",
            "live",
            "--workers",
            "2",
            "--gateways",
            "1",
            "--players",
            "36",
            "--server",
            "feltd",
            "--think-min",
            "0.1",
            "--think-max",
            "0.3",
            "--warmup",
            "0",
            "--seconds",
            "2",
            "--lost-after",
            "1",
            "--database-url",
            postgres_server_url,
            "--redis-url",
            redis_url,
            "--json",
            str(rows_file),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "| players | workers | gateways | p50 ms | p99 ms | max ms | actions/s | errors |" in out, out
    assert "| 36 | 2 | 1 |" in out, out
    assert "Redis commands/hand | PG commits/hand" in out, out
    [row] = json.loads(rows_file.read_text())["cluster"]
    assert row["connected"] == 36 and row["seated"] == 36, row
    # leases decided, the bench saw to it that each worker got its share of the four tournaments
    assert row["tournaments"] == {"worker1": 2, "worker2": 2}, row
    for figure in ("p50_ms", "p99_ms", "max_ms"):
        assert isinstance(row[figure], float) and not math.isnan(row[figure]), (figure, row)
    assert row["actions_per_s"] > 0, row
    assert set(row["cpu_pct"]) == {"gateway1", "worker1", "worker2", "redis", "postgres"}, row
    assert set(row["rss_mib"]) == {"gateway1", "worker1", "worker2", "redis"}, row
    assert all(value > 0 for value in row["rss_mib"].values()), row
    # players' acts went through the gateway, Redis and a worker and came back as broadcasts
    assert row["costs"]["client_frames_per_action"] > 1, row
    assert row["costs"]["redis_bytes_in_per_action"] > 0, row
    assert bench_databases(postgres_server_url) <= databases_before
    assert list(tmp_path.iterdir()) == [rows_file]
