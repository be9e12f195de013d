"""The server's numbers, in the Prometheus text format (``GET /metrics``).

Counters and gauges are plain attributes the server's parts bump; the action latency is a
histogram (from a player's ``act`` arriving to its ``action_taken`` being handed to every
follower's send queue), with fixed buckets in seconds.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from dataclasses import dataclass, field

LATENCY_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)


@dataclass(slots=True)
class Histogram:
    buckets: tuple[float, ...] = LATENCY_BUCKETS
    counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))
    total: float = 0.0
    count: int = 0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.buckets, value)] += 1
        self.total += value
        self.count += 1


@dataclass(slots=True)
class Metrics:
    """What ``GET /metrics`` reports."""

    started: float = field(default_factory=time.monotonic)
    connections: int = 0
    connections_total: int = 0
    connections_refused: int = 0  # past max_connections (HTTP 503) or max_opening (dropped)
    error_closes: int = 0  # closed for too many refused frames or errors
    frames_in: int = 0
    frames_out: int = 0
    bytes_out: int = 0
    send_queue_drops: int = 0
    resyncs: int = 0
    sessions_moved: int = 0  # sessions told again where they sit: their tournament moved worker
    slow_closes: int = 0
    protocol_errors: int = 0
    tables: int = 0
    tournaments: int = 0
    hands: int = 0
    actions: int = 0
    action_latency: Histogram = field(default_factory=Histogram)

    def render(self) -> str:
        uptime = time.monotonic() - self.started
        lines = [
            "# HELP feltd_connections WebSocket connections open now.",
            "# TYPE feltd_connections gauge",
            f"feltd_connections {self.connections}",
            "# TYPE feltd_connections_total counter",
            f"feltd_connections_total {self.connections_total}",
            "# HELP feltd_connections_refused_total Connections refused past the connection limits.",
            "# TYPE feltd_connections_refused_total counter",
            f"feltd_connections_refused_total {self.connections_refused}",
            "# TYPE feltd_error_closes_total counter",
            f"feltd_error_closes_total {self.error_closes}",
            "# TYPE feltd_frames_in_total counter",
            f"feltd_frames_in_total {self.frames_in}",
            "# TYPE feltd_frames_out_total counter",
            f"feltd_frames_out_total {self.frames_out}",
            "# HELP feltd_bytes_out_total Bytes of data frames written, WebSocket headers included.",
            "# TYPE feltd_bytes_out_total counter",
            f"feltd_bytes_out_total {self.bytes_out}",
            "# HELP feltd_send_queue_drops_total Frames dropped for clients that did not read (resynced).",
            "# TYPE feltd_send_queue_drops_total counter",
            f"feltd_send_queue_drops_total {self.send_queue_drops}",
            "# TYPE feltd_resyncs_total counter",
            f"feltd_resyncs_total {self.resyncs}",
            "# HELP feltd_sessions_moved_total Sessions that followed their tournament to another worker.",
            "# TYPE feltd_sessions_moved_total counter",
            f"feltd_sessions_moved_total {self.sessions_moved}",
            "# TYPE feltd_slow_client_closes_total counter",
            f"feltd_slow_client_closes_total {self.slow_closes}",
            "# TYPE feltd_protocol_errors_total counter",
            f"feltd_protocol_errors_total {self.protocol_errors}",
            "# TYPE feltd_tables gauge",
            f"feltd_tables {self.tables}",
            "# TYPE feltd_tournaments gauge",
            f"feltd_tournaments {self.tournaments}",
            "# TYPE feltd_hands_total counter",
            f"feltd_hands_total {self.hands}",
            "# HELP feltd_hands_per_second Hands played per second since the server started.",
            "# TYPE feltd_hands_per_second gauge",
            f"feltd_hands_per_second {self.hands / uptime if uptime > 0 else 0.0:.3f}",
            "# TYPE feltd_actions_total counter",
            f"feltd_actions_total {self.actions}",
            "# HELP feltd_action_latency_seconds From a player's act arriving to its broadcast.",
            "# TYPE feltd_action_latency_seconds histogram",
        ]
        histogram = self.action_latency
        cumulative = 0
        for bound, count in zip(histogram.buckets, histogram.counts, strict=False):
            cumulative += count
            lines.append(f'feltd_action_latency_seconds_bucket{{le="{bound}"}} {cumulative}')
        lines.append(f'feltd_action_latency_seconds_bucket{{le="+Inf"}} {histogram.count}')
        lines.append(f"feltd_action_latency_seconds_sum {histogram.total:.6f}")
        lines.append(f"feltd_action_latency_seconds_count {histogram.count}")
        return "\n".join(lines) + "\n"
