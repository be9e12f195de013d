"""Hand histories: PHH export and import (``phh``), replay of imported hands through our engine
(``replay``), and the PokerStars-style text that tracking software imports (``pokerstars``).
Each is a rendering of a hand's setup and event log (``engine.events``)."""
