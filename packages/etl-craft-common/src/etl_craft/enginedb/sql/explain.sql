-- name: explain_task_attempts --
-- Every attempt of one task run, oldest first, with its outcome and retry facts.
SELECT ATTEMPT_NUMBER AS attempt_number, STATUS AS status, NOT_BEFORE AS not_before,
       ENDED_AT AS ended_at, RETRYABLE AS retryable, ERROR_MESSAGE AS error_message,
       QUEUED_AT AS queued_at
  FROM AUD_TASK_ATTEMPTS
 WHERE TASK_RUN_ID = :task_run_id
 ORDER BY ATTEMPT_NUMBER;

-- name: explain_gate_waits --
-- The gate waits of one run that hold back one task: its own and the run's pipeline gate.
SELECT TASK_ID AS task_id, FIRST_CHECK_AT AS first_check_at,
       NEXT_CHECK_AT AS next_check_at, LOOKS AS looks, WAIT_UNTIL AS wait_until,
       LAST_REASON AS last_reason, RESOLVED_AT AS resolved_at
  FROM AUD_GATE_WAITS
 WHERE PIPELINE_RUN_ID = :pipeline_run_id AND (TASK_ID = :task_id OR TASK_ID IS NULL)
 ORDER BY GATE_WAIT_ID;

-- name: explain_gate_decisions --
-- The decisions of one run on one task's dependencies and on its pipeline's, with the upstream.
SELECT g.TASK_DEPENDENCY_ID AS task_dependency_id, g.RESULT AS result, g.REASON AS reason,
       g.DECIDED_AT AS decided_at, g.DECIDED_BY AS decided_by, u.TASK_CODE AS upstream_task_code,
       coalesce(up.PIPELINE_CODE, pp.PIPELINE_CODE) AS upstream_pipeline_code,
       s.STATUS AS upstream_status, s.ROWS_WRITTEN AS upstream_rows
  FROM AUD_GATE_DECISIONS g
  LEFT JOIN CFG_TASK_DEPENDENCY d ON d.TASK_DEPENDENCY_ID = g.TASK_DEPENDENCY_ID
  LEFT JOIN CFG_TASKS u ON u.TASK_ID = d.DEPENDS_ON_TASK_ID
  LEFT JOIN CFG_PIPELINES up ON up.PIPELINE_ID = u.PIPELINE_ID
  LEFT JOIN CFG_PIPELINE_DEPENDENCY pd ON pd.PIPELINE_DEPENDENCY_ID = g.PIPELINE_DEPENDENCY_ID
  LEFT JOIN CFG_PIPELINES pp ON pp.PIPELINE_ID = pd.DEPENDS_ON_PIPELINE_ID
  LEFT JOIN AUD_TASK_RUN_LOG s ON s.TASK_RUN_ID = g.SELECTED_TASK_RUN_ID
 WHERE g.PIPELINE_RUN_ID = :pipeline_run_id AND (g.TASK_ID = :task_id OR g.TASK_ID IS NULL)
 ORDER BY g.DECISION_ID;

-- name: explain_run_attempt_history --
-- Every attempt of one run's task runs with the moments it was queued, claimed, started and ended.
SELECT a.TASK_RUN_ID AS task_run_id, a.ATTEMPT_ID AS attempt_id, a.ATTEMPT_NUMBER AS attempt_number,
       a.STATUS AS status, a.NOT_BEFORE AS not_before, a.QUEUED_AT AS queued_at,
       a.CLAIMED_AT AS claimed_at, a.STARTED_AT AS started_at, a.ENDED_AT AS ended_at,
       a.OWNER_ID AS owner_id, a.RETRYABLE AS retryable, a.ERROR_MESSAGE AS error_message,
       a.ROWS_WRITTEN AS rows_written, a.CANCEL_REQUESTED_AT AS cancel_requested_at
  FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
 WHERE t.PIPELINE_RUN_ID = :pipeline_run_id
 ORDER BY a.TASK_RUN_ID, a.ATTEMPT_NUMBER;

-- name: explain_run_interventions --
-- The operators' interventions on one run and its task runs, oldest first.
SELECT TASK_RUN_ID AS task_run_id, KIND AS kind, FROM_STATUS AS from_status,
       TO_STATUS AS to_status, ROWS_WRITTEN AS rows_written, REASON AS reason,
       REQUESTED_AT AS requested_at, REQUESTED_BY AS requested_by
  FROM AUD_RUN_INTERVENTIONS
 WHERE PIPELINE_RUN_ID = :pipeline_run_id
 ORDER BY INTERVENTION_ID;

-- name: explain_run_pauses --
-- Every pause, open or resumed, of one run's pipeline or of its whole project.
SELECT z.PAUSED_AT AS paused_at, z.RESUMED_AT AS resumed_at
  FROM AUD_PIPELINE_PAUSES z
  JOIN CFG_PIPELINES p ON p.PROJECT_ID = z.PROJECT_ID
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_ID = p.PIPELINE_ID
 WHERE r.PIPELINE_RUN_ID = :pipeline_run_id
   AND (z.PIPELINE_ID IS NULL OR z.PIPELINE_ID = p.PIPELINE_ID)
 ORDER BY z.PAUSE_ID;
