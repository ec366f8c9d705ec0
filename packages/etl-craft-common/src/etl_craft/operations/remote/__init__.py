"""Remote mode: an external orchestrator decides, etl-craft executes and records."""
