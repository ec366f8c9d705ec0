"""Who may do what: API tokens, users, UI sessions and the Engine DB grants."""
