"""The pure core of feltd: poker and tournament rules with no I/O, no clock, no global random.

Every decision is a function of explicit inputs (state, an action, ``now``, an injected
``random.Random``), so the engine is deterministic, replayable and testable without an event loop.
"""
