"""etl-craft the overseer (schedules, admission, dispatch)."""
