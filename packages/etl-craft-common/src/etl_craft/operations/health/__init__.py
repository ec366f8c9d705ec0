"""A project's health: what runs, waits and failed, and what keeps queued work from moving."""
