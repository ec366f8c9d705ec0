"""Pipeline specs: what they would change in the Engine DB, and what validate finds in them."""
