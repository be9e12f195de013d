"""The asyncio shell around the engine: gateway, table actors, coordinators, store, bus."""
