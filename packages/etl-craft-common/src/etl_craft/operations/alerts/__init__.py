"""Alerts the overseer raises on the configured channels, and their delivery."""
