"""craft-connector.yml, secrets and service settings."""
