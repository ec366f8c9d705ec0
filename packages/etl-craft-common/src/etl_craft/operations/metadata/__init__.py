"""The metadata editor's operations on pipelines that a spec file defines."""
