-- name: transition_start_attempt --
-- CLAIMED -> RUNNING by its owner once the child process started. STARTED_AT is the clock as
-- this statement runs, after the process exists: etl_craft_now() is the transaction's start
-- here, the claim's instant, which is before the owner started the process.
UPDATE AUD_TASK_ATTEMPTS
   SET STATUS = 'RUNNING', STARTED_AT = clock_timestamp(), HOST = :host, PID = :pid,
       PROCESS_START = :process_start, LOG_PATH = :log_path
 WHERE ATTEMPT_ID = :attempt_id AND STATUS = 'CLAIMED' AND OWNER_ID = :owner_id
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;
