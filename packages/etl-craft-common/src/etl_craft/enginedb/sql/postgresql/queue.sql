-- name: transition_claim_attempts --
-- QUEUED -> CLAIMED: a worker takes up to :limit due attempts of its pool and of one slot kind
-- (as many as it has free slots of that kind), skipping rows others hold, in one statement. It
-- answers, with each, when it became due (queued, or its retry delay ended) to time the wait.
WITH picked AS (
     SELECT q.ATTEMPT_ID FROM AUD_TASK_ATTEMPTS q
      WHERE q.STATUS = 'QUEUED' AND q.POOL = :pool AND q.SLOT_KIND = :slot_kind
        AND (q.NOT_BEFORE IS NULL OR q.NOT_BEFORE <= etl_craft_now())
      ORDER BY q.PRIORITY DESC, q.QUEUED_AT, q.ATTEMPT_ID
      FOR UPDATE SKIP LOCKED
      LIMIT :limit)
UPDATE AUD_TASK_ATTEMPTS a
   SET STATUS = 'CLAIMED', OWNER_ID = :owner_id, CLAIMED_AT = etl_craft_now(), HEARTBEAT_AT = etl_craft_now(),
       LEASE_EXPIRES_AT = etl_craft_add_seconds(etl_craft_now(), :lease_seconds)
  FROM picked
 WHERE a.ATTEMPT_ID = picked.ATTEMPT_ID
RETURNING a.ATTEMPT_ID AS attempt_id, a.TASK_RUN_ID AS task_run_id, a.STATUS AS status,
          a.SLOT_KIND AS slot_kind, greatest(a.QUEUED_AT, a.NOT_BEFORE) AS due_at,
          a.CLAIMED_AT AS claimed_at;
