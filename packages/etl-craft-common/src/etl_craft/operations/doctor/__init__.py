"""doctor: the checks of an installation and the report that runs them."""
