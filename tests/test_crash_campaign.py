"""CRASH-1 against a real process: scripts/crash_campaign.py kills `feltd serve` with SIGKILL at
ten random moments of bot tournaments over WebSockets and checks, after every restart and at the
end of each tournament, from the database alone: the chips the director holds are the chips the
buy-ins issued, the ledger balances, nobody was paid twice, every tournament finishes and pays
out its whole pool."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def test_crash_1_ten_sigkills_lose_no_chip_and_no_cent(repo_root: Path, postgres_server_url: str) -> None:
    env = {**os.environ, "DATABASE_URL": postgres_server_url}
    done = subprocess.run(
        [sys.executable, str(repo_root / "scripts" / "crash_campaign.py"), "--kills", "10", "--speed", "8"],
        cwd=repo_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    print(done.stdout[-3000:])
    summary = next((line for line in done.stdout.splitlines() if line.startswith("summary:")), None)
    assert summary is not None, done.stdout[-2000:] + done.stderr[-2000:]
    found = re.search(
        r"(\d+) kills over (\d+) tournaments, (\d+) checks, (\d+) chips lost, (\d+) cents lost, "
        r"(\d+) double payments, (\d+) of (\d+) tournaments finished",
        summary,
    )
    assert found is not None, summary
    kills, tournaments, checks, chips, cents, twice, finished, total = map(int, found.groups())
    assert kills == 10 and checks >= kills, summary
    assert (chips, cents, twice) == (0, 0, 0), summary
    assert finished == total == tournaments >= 1, summary
    restarts = [line for line in done.stdout.splitlines() if line.startswith("kill ")]
    assert len(restarts) == 10
    assert any("running" in line for line in restarts), "at least one kill must land during play"
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
