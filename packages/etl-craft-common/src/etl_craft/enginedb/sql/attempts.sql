-- name: attempt_invocations --
-- Everything a task process needs to know about each of several attempts,
-- from the ids alone, with the offset its task stored last (ingestion tasks resume from it).
SELECT a.ATTEMPT_ID AS attempt_id, a.ATTEMPT_NUMBER AS attempt_number, a.STATUS AS status,
       a.OWNER_ID AS owner_id, a.TASK_RUN_ID AS task_run_id, t.PIPELINE_RUN_ID AS pipeline_run_id,
       r.PIPELINE_ID AS pipeline_id, t.TASK_ID AS task_id, p.PIPELINE_CODE AS pipeline_code,
       k.TASK_CODE AS task_code, k.HANDLER AS handler, r.RUN_KEY AS run_key, r.RUN_DATE AS run_date,
       j.PROJECT_CODE AS project_code, o.OFFSET_TYPE AS offset_type, o.OFFSET_VALUE AS offset_value,
       r.BUNDLE_ID AS bundle_id
  FROM AUD_TASK_ATTEMPTS a
  JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = t.PIPELINE_RUN_ID
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
  JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID
  LEFT JOIN AUD_TASK_OFFSETS o ON o.TASK_ID = t.TASK_ID
 WHERE a.ATTEMPT_ID IN :attempt_id_list;

-- name: attempt_parameters --
-- The parameters of the tasks and pipelines of several attempts, by
-- attempt, scope ('task' or 'pipeline') and name; a pipeline parameter's PARAMETER_TYPE says how
-- SQL tokens read its value.
SELECT a.ATTEMPT_ID AS attempt_id, 'task' AS scope, c.PARAMETER_NAME AS name,
       c.PARAMETER_VALUE AS value, NULL AS type
  FROM AUD_TASK_ATTEMPTS a
  JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
  JOIN CFG_TASK_PARAMETERS c ON c.TASK_ID = t.TASK_ID
 WHERE a.ATTEMPT_ID IN :attempt_id_list
UNION ALL
SELECT a.ATTEMPT_ID AS attempt_id, 'pipeline' AS scope, c.PARAMETER_NAME AS name,
       c.PARAMETER_VALUE AS value, c.PARAMETER_TYPE AS type
  FROM AUD_TASK_ATTEMPTS a
  JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = t.PIPELINE_RUN_ID
  JOIN CFG_PIPELINE_PARAMETERS c ON c.PIPELINE_ID = r.PIPELINE_ID
 WHERE a.ATTEMPT_ID IN :attempt_id_list
ORDER BY attempt_id, scope, name;

-- name: attempt_status --
-- The current status, owner and cancellation request of one attempt.
SELECT STATUS AS status, OWNER_ID AS owner_id, CANCEL_REQUESTED_AT AS cancel_requested_at,
       LEASE_EXPIRES_AT AS lease_expires_at
  FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :attempt_id;

-- name: expired_attempts --
-- Claimed or running attempts whose lease has expired: the reconciler's work list.
SELECT a.ATTEMPT_ID AS attempt_id, a.OWNER_ID AS owner_id, a.STATUS AS status,
       a.LEASE_EXPIRES_AT AS lease_expires_at, a.HOST AS host, a.PID AS pid,
       a.PROCESS_START AS process_start, a.ATTEMPT_NUMBER AS attempt_number,
       k.HANDLER AS handler
  FROM AUD_TASK_ATTEMPTS a
  JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
  JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID
 WHERE a.STATUS IN ('CLAIMED', 'RUNNING') AND a.LEASE_EXPIRES_AT < etl_craft_now()
 ORDER BY a.ATTEMPT_ID;

-- name: cancel_requests_of_owner --
-- The live attempts of one owner that an operator asked to stop, and when each was asked.
SELECT ATTEMPT_ID AS attempt_id, CANCEL_REQUESTED_AT AS cancel_requested_at
  FROM AUD_TASK_ATTEMPTS
 WHERE OWNER_ID = :owner_id AND STATUS IN ('CLAIMED', 'RUNNING') AND CANCEL_REQUESTED_AT IS NOT NULL
 ORDER BY ATTEMPT_ID;
