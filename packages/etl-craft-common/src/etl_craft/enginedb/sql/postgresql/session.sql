-- name: mark_actor --
-- Mark this transaction with the acting identity that every guard and stamp trigger reads.
SELECT set_config('etl_craft.actor', :actor, true),
       set_config('etl_craft.actor_kind', :actor_kind, true),
       set_config('etl_craft.migration', coalesce(:migration, ''), true);
-- name: notify_event --
-- Wake every loop that listens on etl_craft_events (PostgreSQL only; SQLite loops poll).
SELECT pg_notify('etl_craft_events', :payload);
