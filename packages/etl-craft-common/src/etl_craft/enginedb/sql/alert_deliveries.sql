-- name: alert_events --
-- Events worth an alert since :lookback_seconds ago: failed runs, runs past their SLA (ended
-- MISSED, or live and already late), LOST attempts, gates waiting longer than gate_wait_seconds,
-- and pools whose workers are all gone (none ACTIVE within fresh_seconds) while their oldest due
-- attempt has waited longer than that, with their pipeline.
SELECT 'RUN_FAILED' AS event, r.PIPELINE_RUN_ID AS run_id, CAST(NULL AS BIGINT) AS attempt_id,
       p.PIPELINE_CODE AS pipeline_code
  FROM AUD_PIPELINES_RUN_LOG r JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
 WHERE r.STATUS = 'FAILED'
   AND r.END_DATE > etl_craft_add_seconds(etl_craft_now(), -:lookback_seconds)
UNION ALL
SELECT 'SLA_MISSED', r.PIPELINE_RUN_ID, CAST(NULL AS BIGINT), p.PIPELINE_CODE
  FROM AUD_PIPELINES_RUN_LOG r JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
 WHERE p.SLA_MINUTES IS NOT NULL AND r.START_DATE IS NOT NULL
   AND ((r.SLA_STATUS = 'MISSED'
         AND r.END_DATE > etl_craft_add_seconds(etl_craft_now(), -:lookback_seconds))
        OR (r.END_DATE IS NULL
            AND etl_craft_add_seconds(r.START_DATE, p.SLA_MINUTES * 60) < etl_craft_now()))
UNION ALL
SELECT 'ATTEMPT_LOST', t.PIPELINE_RUN_ID, a.ATTEMPT_ID, p.PIPELINE_CODE
  FROM AUD_TASK_ATTEMPTS a
  JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
  JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = k.PIPELINE_ID
 WHERE a.STATUS = 'LOST'
   AND a.ENDED_AT > etl_craft_add_seconds(etl_craft_now(), -:lookback_seconds)
UNION ALL
SELECT DISTINCT 'GATE_WAITING', g.PIPELINE_RUN_ID, CAST(NULL AS BIGINT), p.PIPELINE_CODE
  FROM AUD_GATE_WAITS g
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = g.PIPELINE_RUN_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
 WHERE g.RESOLVED_AT IS NULL
   AND etl_craft_add_seconds(g.FIRST_CHECK_AT, :gate_wait_seconds) < etl_craft_now()
UNION ALL
SELECT 'NO_WORKER', t.PIPELINE_RUN_ID, a.ATTEMPT_ID, p.PIPELINE_CODE
  FROM AUD_TASK_ATTEMPTS a
  JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
  JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = k.PIPELINE_ID
 WHERE a.ATTEMPT_ID = (SELECT MIN(q.ATTEMPT_ID) FROM AUD_TASK_ATTEMPTS q
                        WHERE q.POOL = a.POOL AND q.STATUS = 'QUEUED'
                          AND (q.NOT_BEFORE IS NULL OR q.NOT_BEFORE <= etl_craft_now()))
   AND etl_craft_add_seconds(a.QUEUED_AT, :fresh_seconds) < etl_craft_now()
   AND EXISTS (SELECT 1 FROM AUD_WORKERS w WHERE w.POOL = a.POOL)
   AND NOT EXISTS (SELECT 1 FROM AUD_WORKERS w
                    WHERE w.POOL = a.POOL AND w.STATUS = 'ACTIVE'
                      AND etl_craft_add_seconds(w.HEARTBEAT_AT, :fresh_seconds) >= etl_craft_now());

-- name: raise_alert --
-- Record an event for a channel, once: no row comes back when it was raised before.
INSERT INTO AUD_ALERT_DELIVERIES
       (CHANNEL, EVENT, EVENT_KEY, PIPELINE_RUN_ID, ATTEMPT_ID, OUTCOME, TRIES, NEXT_TRY_AT, RAISED_AT)
VALUES (:channel, :event, :event_key, :run_id, :attempt_id, 'PENDING', 0, etl_craft_now(),
        etl_craft_now())
ON CONFLICT (CHANNEL, EVENT_KEY) DO NOTHING
RETURNING DELIVERY_ID AS delivery_id;

-- name: due_alert_deliveries --
-- Up to :most deliveries still to send whose next try is due, oldest first, with what the
-- alert tells.
SELECT d.DELIVERY_ID AS delivery_id, d.CHANNEL AS channel, d.EVENT AS event,
       d.PIPELINE_RUN_ID AS run_id, d.ATTEMPT_ID AS attempt_id, d.TRIES AS tries,
       p.PIPELINE_CODE AS pipeline_code, k.TASK_CODE AS task_code,
       COALESCE(a.STATUS, r.STATUS) AS status, COALESCE(a.ERROR_MESSAGE, r.MESSAGE) AS error
  FROM AUD_ALERT_DELIVERIES d
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = d.PIPELINE_RUN_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
  LEFT JOIN AUD_TASK_ATTEMPTS a ON a.ATTEMPT_ID = d.ATTEMPT_ID
  LEFT JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
  LEFT JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID
 WHERE d.OUTCOME = 'PENDING' AND d.NEXT_TRY_AT <= etl_craft_now()
 ORDER BY d.DELIVERY_ID
 LIMIT :most;

-- name: record_alert_try --
-- The outcome of one try: DELIVERED, FAILED (given up), or PENDING again after :delay_seconds.
UPDATE AUD_ALERT_DELIVERIES
   SET OUTCOME = CAST(:outcome AS VARCHAR(16)), TRIES = TRIES + 1,
       LAST_ERROR = CAST(:error AS VARCHAR(500)),
       NEXT_TRY_AT = CASE WHEN CAST(:outcome AS VARCHAR(16)) = 'PENDING'
                          THEN etl_craft_add_seconds(etl_craft_now(), :delay_seconds) END,
       DELIVERED_AT = CASE WHEN CAST(:outcome AS VARCHAR(16)) = 'DELIVERED'
                           THEN etl_craft_now() END
 WHERE DELIVERY_ID = :delivery_id AND OUTCOME = 'PENDING';

-- name: recent_alert_deliveries --
-- The newest :most alerts raised, with their pipeline and how their delivery went.
SELECT d.DELIVERY_ID AS delivery_id, d.CHANNEL AS channel, d.EVENT AS event,
       d.PIPELINE_RUN_ID AS run_id, d.ATTEMPT_ID AS attempt_id, p.PIPELINE_CODE AS pipeline_code,
       d.OUTCOME AS outcome, d.TRIES AS tries, d.LAST_ERROR AS last_error,
       d.RAISED_AT AS raised_at, d.DELIVERED_AT AS delivered_at, d.NEXT_TRY_AT AS next_try_at
  FROM AUD_ALERT_DELIVERIES d
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = d.PIPELINE_RUN_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
 ORDER BY d.DELIVERY_ID DESC
 LIMIT :most;
