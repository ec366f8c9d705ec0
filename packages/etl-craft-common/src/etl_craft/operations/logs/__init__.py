"""Attempts and their logs: where a log is read from, and its lines with secrets masked."""
