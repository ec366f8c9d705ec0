"""Task handlers: SQL actions, business rules, Python scripts and email alerts."""
