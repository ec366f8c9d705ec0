"""Ready sets, gates, retries, schedule ticks and finalization."""
