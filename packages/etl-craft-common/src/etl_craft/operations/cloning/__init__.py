"""Cloning: the AUD_ tables mirrored into a warehouse schema, by hand (etl-craft clone) or on
the overseer's own schedule (Cloning.every_minutes)."""
