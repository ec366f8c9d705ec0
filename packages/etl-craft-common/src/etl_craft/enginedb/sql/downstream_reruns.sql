-- name: record_downstream_rerun --
-- A queued rerun with downstream, to be carried on by etl-craft server; recorded before its first
-- stage's attempt is queued, so that attempt comes after SINCE_ATTEMPT_ID.
INSERT INTO AUD_DOWNSTREAM_RERUNS
    (PIPELINE_RUN_ID, TASK_ID, SINCE_ATTEMPT_ID, REASON, REQUESTED_AT, REQUESTED_BY,
     REQUESTED_BY_KIND)
VALUES (:run_id, :task_id,
        (SELECT COALESCE(MAX(A.ATTEMPT_ID), 0) FROM AUD_TASK_ATTEMPTS A
           JOIN AUD_TASK_RUN_LOG T ON T.TASK_RUN_ID = A.TASK_RUN_ID
          WHERE T.PIPELINE_RUN_ID = :run_id),
        :reason, etl_craft_now(), :actor, :actor_kind);

-- name: settle_downstream_reruns --
-- Nothing more to redo for the run's pending rerun with downstream (or a later rerun replaces it).
UPDATE AUD_DOWNSTREAM_RERUNS SET SETTLED_AT = etl_craft_now()
 WHERE PIPELINE_RUN_ID = :run_id AND SETTLED_AT IS NULL;

-- name: pending_downstream_rerun --
-- The run's rerun with downstream still to carry on, if any.
SELECT TASK_ID AS task_id, SINCE_ATTEMPT_ID AS since_attempt_id, REASON AS reason,
       REQUESTED_BY AS requested_by, REQUESTED_BY_KIND AS requested_by_kind
  FROM AUD_DOWNSTREAM_RERUNS
 WHERE PIPELINE_RUN_ID = :run_id AND SETTLED_AT IS NULL;

-- name: runs_with_pending_downstream_reruns --
-- The ended runs whose rerun with downstream has a next stage to queue (after a restart too).
SELECT D.PIPELINE_RUN_ID AS pipeline_run_id
  FROM AUD_DOWNSTREAM_RERUNS D
  JOIN AUD_PIPELINES_RUN_LOG R ON R.PIPELINE_RUN_ID = D.PIPELINE_RUN_ID
 WHERE D.SETTLED_AT IS NULL AND R.STATUS IN ('SUCCESS', 'FAILED', 'CANCELLED', 'SKIPPED')
 ORDER BY D.PIPELINE_RUN_ID;

-- name: task_ids_run_since --
-- The tasks of a run with an attempt after the given one: queued by a rerun's stage, or planned
-- again by the supervisor (a skip it judged again).
SELECT DISTINCT T.TASK_ID AS task_id
  FROM AUD_TASK_ATTEMPTS A
  JOIN AUD_TASK_RUN_LOG T ON T.TASK_RUN_ID = A.TASK_RUN_ID
 WHERE T.PIPELINE_RUN_ID = :run_id AND A.ATTEMPT_ID > :since;
