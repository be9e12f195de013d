"""The wire contract between feltd and its clients: typed messages, one codec, error codes."""

PROTOCOL_VERSION = 1
