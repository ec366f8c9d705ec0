"""validate: the checks of a project's metadata, made without running anything, and the
findings among them that keep a pipeline from running."""
