-- name: mark_actor --
-- Mark this transaction with the acting identity that every guard and stamp trigger reads.
SELECT set_config('etl_craft.actor', :actor, true),
       set_config('etl_craft.actor_kind', :actor_kind, true),
       set_config('etl_craft.migration', coalesce(:migration, ''), true);

-- name: mark_purge --
-- Name the AUD_ACTIONS row of the purge this transaction is, for the history guards.
SELECT set_config('etl_craft.purge', :action_id, true);

-- name: notify_events --
-- Wake every loop that listens on etl_craft_events, once per payload (PostgreSQL only; SQLite loops poll).
SELECT pg_notify('etl_craft_events', payload) FROM unnest(CAST(:payloads AS TEXT[])) AS payload;

-- name: lock_pipeline_runs --
-- Serialise callers that find or create a pipeline's run, until this transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended('etl_craft.pipeline_runs:' || CAST(:pipeline_id AS TEXT), 0));

-- name: local_statement_timeout --
-- Cancel any statement of this transaction that runs longer than this (a lease renewal: an Engine DB that is there answers within it).
SELECT set_config('statement_timeout', :milliseconds, true) AS statement_timeout;
