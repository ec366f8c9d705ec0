"""explain: why a task of a run is in its state, now or at a past moment."""
