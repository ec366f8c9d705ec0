"""The task process, the attempt launcher, log capture, leases and reconciliation."""
