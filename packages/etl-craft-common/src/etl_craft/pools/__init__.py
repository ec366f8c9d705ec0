"""The Pool protocol and its providers."""
