-- name: transition_start_attempt --
-- CLAIMED -> RUNNING by its owner once the child process started. STARTED_AT is the clock as
-- this statement runs, after the process exists: etl_craft_now() is the transaction's start
-- here, the claim's instant, which is before the owner started the process.
UPDATE AUD_TASK_ATTEMPTS
   SET STATUS = 'RUNNING', STARTED_AT = clock_timestamp(), HOST = :host, PID = :pid,
       PROCESS_START = :process_start, LOG_PATH = :log_path
 WHERE ATTEMPT_ID = :attempt_id AND STATUS = 'CLAIMED' AND OWNER_ID = :owner_id
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_admit_runs --
-- QUEUED -> IN-PROGRESS for many runs in one statement (ids as a JSON array), each as transition_admit_run.
UPDATE AUD_PIPELINES_RUN_LOG
   SET STATUS = 'IN-PROGRESS', START_DATE = etl_craft_now(),
       BUNDLE_ID = (SELECT max(b.BUNDLE_ID)
                    FROM AUD_PROJECT_BUNDLES b JOIN CFG_PIPELINES p ON p.PROJECT_ID = b.PROJECT_ID
                   WHERE p.PIPELINE_ID = AUD_PIPELINES_RUN_LOG.PIPELINE_ID)
 WHERE PIPELINE_RUN_ID IN (SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(:run_ids AS JSON)))
   AND STATUS = 'QUEUED'
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;
