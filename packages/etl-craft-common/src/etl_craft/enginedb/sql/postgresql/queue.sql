-- name: transition_claim_next_attempt --
-- QUEUED -> CLAIMED: a worker takes the next due attempt of its pool and free slot kinds, skipping rows others hold.
UPDATE AUD_TASK_ATTEMPTS
   SET STATUS = 'CLAIMED', OWNER_ID = :owner_id, CLAIMED_AT = etl_craft_now(), HEARTBEAT_AT = etl_craft_now(),
       LEASE_EXPIRES_AT = etl_craft_add_seconds(etl_craft_now(), :lease_seconds)
 WHERE ATTEMPT_ID = (
       SELECT q.ATTEMPT_ID FROM AUD_TASK_ATTEMPTS q
        WHERE q.STATUS = 'QUEUED' AND q.POOL = :pool AND q.SLOT_KIND = ANY(:free_kinds)
          AND (q.NOT_BEFORE IS NULL OR q.NOT_BEFORE <= etl_craft_now())
        ORDER BY q.PRIORITY DESC, q.QUEUED_AT, q.ATTEMPT_ID
        FOR UPDATE SKIP LOCKED
        LIMIT 1)
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;
