-- name: try_overseer_lock --
-- Leadership: a session lock held as long as the leading overseer's dedicated connection lives.
SELECT pg_try_advisory_lock(hashtextextended('etl_craft.overseer', 0)) AS locked;

-- name: listen_events --
-- Wake on transitions' notifications.
LISTEN etl_craft_events;
