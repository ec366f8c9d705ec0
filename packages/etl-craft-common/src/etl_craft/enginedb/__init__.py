"""The Engine DB: schema, migrations, named queries, connections, transitions and reads."""
