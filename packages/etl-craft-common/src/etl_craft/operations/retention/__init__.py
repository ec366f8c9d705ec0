"""Retention: purging history past its retention, by hand (etl-craft purge) or daily by the
overseer."""
