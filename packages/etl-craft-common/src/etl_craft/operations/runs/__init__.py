"""Runs: starting them (in the foreground, as triggers, reruns, backfills), reading them
and watching them."""
