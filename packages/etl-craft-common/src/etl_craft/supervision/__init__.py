"""Supervising runs: the run supervisor both owners use, and the foreground `etl-craft run`."""
