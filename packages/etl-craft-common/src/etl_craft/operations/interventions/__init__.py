"""Operator interventions on runs and pipelines: mark, cancel, reopen, pause, and what they
change downstream."""
