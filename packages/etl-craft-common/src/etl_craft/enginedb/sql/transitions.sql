-- name: transition_create_run --
-- Create a QUEUED run; nothing when the pipeline already has a run with this key.
INSERT INTO AUD_PIPELINES_RUN_LOG
    (PIPELINE_ID, RUN_KEY, TRIGGER_KIND, RUN_DATE, STATUS, PRIORITY, QUEUED_AT, CONFIG_SHA256,
     STARTED_BY, STARTED_BY_KIND)
VALUES (:pipeline_id, :run_key, :trigger_kind, :run_date, 'QUEUED', :priority, etl_craft_now(),
        :config_sha256, :actor, :actor_kind)
ON CONFLICT (PIPELINE_ID, RUN_KEY) DO NOTHING
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_admit_run --
-- QUEUED -> IN-PROGRESS when the pipeline gate passes; the run pins its project's latest bundle.
UPDATE AUD_PIPELINES_RUN_LOG
   SET STATUS = 'IN-PROGRESS', START_DATE = etl_craft_now(),
       BUNDLE_ID = (SELECT max(b.BUNDLE_ID)
                    FROM AUD_PROJECT_BUNDLES b JOIN CFG_PIPELINES p ON p.PROJECT_ID = b.PROJECT_ID
                   WHERE p.PIPELINE_ID = AUD_PIPELINES_RUN_LOG.PIPELINE_ID)
 WHERE PIPELINE_RUN_ID = :pipeline_run_id AND STATUS = 'QUEUED'
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_admit_runs --
-- QUEUED -> IN-PROGRESS for many runs in one statement (ids as a JSON array), each as transition_admit_run.
UPDATE AUD_PIPELINES_RUN_LOG
   SET STATUS = 'IN-PROGRESS', START_DATE = etl_craft_now(),
       BUNDLE_ID = (SELECT max(b.BUNDLE_ID)
                    FROM AUD_PROJECT_BUNDLES b JOIN CFG_PIPELINES p ON p.PROJECT_ID = b.PROJECT_ID
                   WHERE p.PIPELINE_ID = AUD_PIPELINES_RUN_LOG.PIPELINE_ID)
 WHERE PIPELINE_RUN_ID IN (SELECT value FROM json_each(:run_ids)) AND STATUS = 'QUEUED'
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_skip_run --
-- QUEUED -> SKIPPED when the gate refuses the run or its tick is not run.
UPDATE AUD_PIPELINES_RUN_LOG
   SET STATUS = 'SKIPPED', END_DATE = etl_craft_now(), MESSAGE = :message,
       ENDED_BY = :actor, ENDED_BY_KIND = :actor_kind
 WHERE PIPELINE_RUN_ID = :pipeline_run_id AND STATUS = 'QUEUED'
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_finalize_remote_run --
-- IN-PROGRESS -> SUCCESS, FAILED or SKIPPED as the orchestrator decided (run --finalize-only), no attempt live.
UPDATE AUD_PIPELINES_RUN_LOG
   SET STATUS = :status, END_DATE = etl_craft_now(), MESSAGE = :message,
       OWNER_ID = NULL, LEASE_EXPIRES_AT = NULL, ENDED_BY = :actor, ENDED_BY_KIND = :actor_kind
 WHERE PIPELINE_RUN_ID = :pipeline_run_id AND STATUS = 'IN-PROGRESS'
   AND NOT EXISTS (
       SELECT 1 FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
        WHERE t.PIPELINE_RUN_ID = :pipeline_run_id AND a.STATUS IN ('QUEUED', 'CLAIMED', 'RUNNING'))
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_finish_run --
-- IN-PROGRESS -> SUCCESS or FAILED by finalize, no attempt live; the first finalize decides the SLA.
UPDATE AUD_PIPELINES_RUN_LOG
   SET STATUS = :status, END_DATE = etl_craft_now(), MESSAGE = :message,
       SLA_STATUS = COALESCE(SLA_STATUS, :sla_status),
       OUTPUT_REVISION = OUTPUT_REVISION + :revision_step,
       OWNER_ID = NULL, LEASE_EXPIRES_AT = NULL, ENDED_BY = :actor, ENDED_BY_KIND = :actor_kind
 WHERE PIPELINE_RUN_ID = :pipeline_run_id AND STATUS = 'IN-PROGRESS'
   AND NOT EXISTS (
       SELECT 1 FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
        WHERE t.PIPELINE_RUN_ID = :pipeline_run_id AND a.STATUS IN ('QUEUED', 'CLAIMED', 'RUNNING'))
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_cancel_run --
-- QUEUED or IN-PROGRESS -> CANCELLED once none of its attempts is live.
UPDATE AUD_PIPELINES_RUN_LOG
   SET STATUS = 'CANCELLED', END_DATE = etl_craft_now(), MESSAGE = :message,
       OWNER_ID = NULL, LEASE_EXPIRES_AT = NULL, ENDED_BY = :actor, ENDED_BY_KIND = :actor_kind
 WHERE PIPELINE_RUN_ID = :pipeline_run_id AND STATUS IN ('QUEUED', 'IN-PROGRESS')
   AND NOT EXISTS (
       SELECT 1 FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
        WHERE t.PIPELINE_RUN_ID = :pipeline_run_id AND a.STATUS IN ('QUEUED', 'CLAIMED', 'RUNNING'))
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_reopen_run --
-- A terminal run -> IN-PROGRESS, no other run of the pipeline live; a decided SLA stays.
UPDATE AUD_PIPELINES_RUN_LOG
   SET STATUS = 'IN-PROGRESS', END_DATE = NULL, MESSAGE = :message,
       ENDED_BY = NULL, ENDED_BY_KIND = NULL
 WHERE PIPELINE_RUN_ID = :pipeline_run_id
   AND STATUS IN ('SUCCESS', 'FAILED', 'SKIPPED', 'CANCELLED')
   AND NOT EXISTS (
       SELECT 1 FROM AUD_PIPELINES_RUN_LOG o
        WHERE o.PIPELINE_ID = AUD_PIPELINES_RUN_LOG.PIPELINE_ID
          AND o.PIPELINE_RUN_ID <> :pipeline_run_id AND o.STATUS IN ('QUEUED', 'IN-PROGRESS'))
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_mark_run --
-- An operator sets an IN-PROGRESS or terminal run to SUCCESS, FAILED or SKIPPED; no attempt may be live.
UPDATE AUD_PIPELINES_RUN_LOG
   SET STATUS = :status, END_DATE = etl_craft_now(), MESSAGE = :message,
       OWNER_ID = NULL, LEASE_EXPIRES_AT = NULL, ENDED_BY = :actor, ENDED_BY_KIND = :actor_kind
 WHERE PIPELINE_RUN_ID = :pipeline_run_id
   AND STATUS IN ('IN-PROGRESS', 'SUCCESS', 'FAILED', 'SKIPPED', 'CANCELLED')
   AND NOT EXISTS (
       SELECT 1 FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID
        WHERE t.PIPELINE_RUN_ID = :pipeline_run_id AND a.STATUS IN ('QUEUED', 'CLAIMED', 'RUNNING'))
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_claim_run_lease --
-- Take supervision of a live run that nobody holds (or whose lease expired and was reconciled).
UPDATE AUD_PIPELINES_RUN_LOG
   SET OWNER_ID = :owner_id, LEASE_EXPIRES_AT = etl_craft_add_seconds(etl_craft_now(), :lease_seconds)
 WHERE PIPELINE_RUN_ID = :pipeline_run_id AND STATUS IN ('QUEUED', 'IN-PROGRESS')
   AND (OWNER_ID IS NULL OR OWNER_ID = :owner_id OR LEASE_EXPIRES_AT < etl_craft_now())
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_renew_run_lease --
-- The run's owner extends its lease.
UPDATE AUD_PIPELINES_RUN_LOG
   SET LEASE_EXPIRES_AT = etl_craft_add_seconds(etl_craft_now(), :lease_seconds)
 WHERE PIPELINE_RUN_ID = :pipeline_run_id AND STATUS IN ('QUEUED', 'IN-PROGRESS') AND OWNER_ID = :owner_id
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_release_run_lease --
-- The run's owner gives up supervision, leaving the run resumable.
UPDATE AUD_PIPELINES_RUN_LOG
   SET OWNER_ID = NULL, LEASE_EXPIRES_AT = NULL
 WHERE PIPELINE_RUN_ID = :pipeline_run_id AND OWNER_ID = :owner_id
RETURNING PIPELINE_RUN_ID AS pipeline_run_id, STATUS AS status;

-- name: transition_create_task_run --
-- Create the task run of a task in a run, IN-PROGRESS with no attempt yet; nothing if it exists.
INSERT INTO AUD_TASK_RUN_LOG
    (PIPELINE_RUN_ID, TASK_ID, STATUS, ATTEMPT_COUNT, START_DATE, UPDATED_BY, UPDATED_BY_KIND)
VALUES (:pipeline_run_id, :task_id, 'IN-PROGRESS', 0, etl_craft_now(), :actor, :actor_kind)
ON CONFLICT (PIPELINE_RUN_ID, TASK_ID) DO NOTHING
RETURNING TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_skip_new_task_run --
-- Record a task that never ran (unsatisfiable, --skip) as SKIPPED with its reason; nothing if it exists.
INSERT INTO AUD_TASK_RUN_LOG
    (PIPELINE_RUN_ID, TASK_ID, STATUS, ATTEMPT_COUNT, START_DATE, END_DATE, MESSAGE, UPDATED_BY, UPDATED_BY_KIND)
VALUES (:pipeline_run_id, :task_id, 'SKIPPED', 0, etl_craft_now(), etl_craft_now(), :message, :actor, :actor_kind)
ON CONFLICT (PIPELINE_RUN_ID, TASK_ID) DO NOTHING
RETURNING TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_mark_task_run --
-- An operator sets a settled task run to SUCCESS, FAILED or SKIPPED; never while an attempt is live.
UPDATE AUD_TASK_RUN_LOG
   SET STATUS = :status, END_DATE = etl_craft_now(), MESSAGE = :message, ROWS_WRITTEN = :rows_written,
       UPDATED_BY = :actor, UPDATED_BY_KIND = :actor_kind
 WHERE TASK_RUN_ID = :task_run_id AND STATUS IN ('SUCCESS', 'FAILED', 'SKIPPED', 'CANCELLED')
   AND NOT EXISTS (SELECT 1 FROM AUD_TASK_ATTEMPTS a
                    WHERE a.TASK_RUN_ID = :task_run_id AND a.STATUS IN ('QUEUED', 'CLAIMED', 'RUNNING'))
RETURNING TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_reword_skipped_task_run --
-- A task run the engine skipped (SKIPPED, no attempt) gets the reason a new judgement gives it.
UPDATE AUD_TASK_RUN_LOG
   SET MESSAGE = :message, UPDATED_BY = :actor, UPDATED_BY_KIND = :actor_kind
 WHERE TASK_RUN_ID = :task_run_id AND STATUS = 'SKIPPED' AND ATTEMPT_COUNT = 0
RETURNING TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_queue_attempt --
-- Queue the next attempt of a task run; nothing when it already has a live one (partial unique index).
INSERT INTO AUD_TASK_ATTEMPTS
    (TASK_RUN_ID, ATTEMPT_NUMBER, STATUS, POOL, SLOT_KIND, PRIORITY, NOT_BEFORE, QUEUED_AT,
     REQUESTED_BY, REQUESTED_BY_KIND)
VALUES (:task_run_id,
        (SELECT coalesce(max(a.ATTEMPT_NUMBER), 0) + 1 FROM AUD_TASK_ATTEMPTS a WHERE a.TASK_RUN_ID = :task_run_id),
        'QUEUED', :pool, :slot_kind, :priority, :not_before, etl_craft_now(), :actor, :actor_kind)
ON CONFLICT DO NOTHING
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status,
          ATTEMPT_NUMBER AS attempt_number;

-- name: transition_summarise_task_run --
-- Make the task run the summary of its latest attempt (same transaction as the attempt change).
UPDATE AUD_TASK_RUN_LOG
   SET STATUS = :summary, LATEST_ATTEMPT_ID = :attempt_id,
       ATTEMPT_COUNT = (SELECT max(a.ATTEMPT_NUMBER) FROM AUD_TASK_ATTEMPTS a WHERE a.TASK_RUN_ID = :task_run_id),
       END_DATE = CASE WHEN :is_live THEN NULL ELSE etl_craft_now() END,
       SOURCE_COUNT = :source_count, TARGET_COUNT = :target_count, INSERT_COUNT = :insert_count,
       UPDATE_COUNT = :update_count, DELETE_COUNT = :delete_count, DUPLICATE_COUNT = :duplicate_count,
       ROWS_WRITTEN = :rows_written, NEW_KEY_COUNT = :new_key_count,
       CHANGED_KEY_COUNT = :changed_key_count, UNCHANGED_KEY_COUNT = :unchanged_key_count,
       STALE_KEY_COUNT = :stale_key_count, SAME_TIME_KEY_COUNT = :same_time_key_count,
       REOPENED_KEY_COUNT = :reopened_key_count,
       ERROR_MESSAGE = :error_message, TASK_LOG = :task_log,
       MESSAGE = :message, UPDATED_BY = :actor, UPDATED_BY_KIND = :actor_kind
 WHERE TASK_RUN_ID = :task_run_id
RETURNING TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_claim_attempt --
-- QUEUED -> CLAIMED by an owner, once the attempt is due.
UPDATE AUD_TASK_ATTEMPTS
   SET STATUS = 'CLAIMED', OWNER_ID = :owner_id, CLAIMED_AT = etl_craft_now(), HEARTBEAT_AT = etl_craft_now(),
       LEASE_EXPIRES_AT = etl_craft_add_seconds(etl_craft_now(), :lease_seconds)
 WHERE ATTEMPT_ID = :attempt_id AND STATUS = 'QUEUED'
   AND (NOT_BEFORE IS NULL OR NOT_BEFORE <= etl_craft_now())
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_start_attempt --
-- CLAIMED -> RUNNING by its owner once the child process started.
UPDATE AUD_TASK_ATTEMPTS
   SET STATUS = 'RUNNING', STARTED_AT = etl_craft_now(), HOST = :host, PID = :pid,
       PROCESS_START = :process_start, LOG_PATH = :log_path
 WHERE ATTEMPT_ID = :attempt_id AND STATUS = 'CLAIMED' AND OWNER_ID = :owner_id
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_finish_attempt --
-- CLAIMED or RUNNING -> SUCCESS or FAILED, recorded by its owner (the child or its parent).
UPDATE AUD_TASK_ATTEMPTS
   SET STATUS = :status, ENDED_AT = etl_craft_now(), EXIT_CODE = :exit_code, RETRYABLE = :retryable,
       SOURCE_COUNT = :source_count, TARGET_COUNT = :target_count, INSERT_COUNT = :insert_count,
       UPDATE_COUNT = :update_count, DELETE_COUNT = :delete_count, DUPLICATE_COUNT = :duplicate_count,
       ROWS_WRITTEN = :rows_written, NEW_KEY_COUNT = :new_key_count,
       CHANGED_KEY_COUNT = :changed_key_count, UNCHANGED_KEY_COUNT = :unchanged_key_count,
       STALE_KEY_COUNT = :stale_key_count, SAME_TIME_KEY_COUNT = :same_time_key_count,
       REOPENED_KEY_COUNT = :reopened_key_count,
       ERROR_MESSAGE = :error_message, TASK_LOG = :task_log,
       OUTCOME_SOURCE = :outcome_source, ENDED_BY = :actor, ENDED_BY_KIND = :actor_kind
 WHERE ATTEMPT_ID = :attempt_id AND STATUS IN ('CLAIMED', 'RUNNING') AND OWNER_ID = :owner_id
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_time_out_attempt --
-- RUNNING -> TIMED_OUT by its owner on the task's time limit.
UPDATE AUD_TASK_ATTEMPTS
   SET STATUS = 'TIMED_OUT', ENDED_AT = etl_craft_now(), EXIT_CODE = :exit_code, RETRYABLE = 'Y',
       ERROR_MESSAGE = :error_message, TASK_LOG = :task_log, OUTCOME_SOURCE = 'OWNER',
       ENDED_BY = :actor, ENDED_BY_KIND = :actor_kind
 WHERE ATTEMPT_ID = :attempt_id AND STATUS = 'RUNNING' AND OWNER_ID = :owner_id
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_cancel_queued_attempt --
-- QUEUED -> CANCELLED: nobody owns it yet, so the canceller ends it at once.
UPDATE AUD_TASK_ATTEMPTS
   SET STATUS = 'CANCELLED', ENDED_AT = etl_craft_now(), ERROR_MESSAGE = :error_message,
       CANCEL_REQUESTED_AT = coalesce(CANCEL_REQUESTED_AT, etl_craft_now()), OUTCOME_SOURCE = 'OPERATOR',
       ENDED_BY = :actor, ENDED_BY_KIND = :actor_kind
 WHERE ATTEMPT_ID = :attempt_id AND STATUS = 'QUEUED'
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_cancel_owned_attempt --
-- CLAIMED or RUNNING -> CANCELLED by its owner after stopping the process.
UPDATE AUD_TASK_ATTEMPTS
   SET STATUS = 'CANCELLED', ENDED_AT = etl_craft_now(), ERROR_MESSAGE = :error_message,
       CANCEL_REQUESTED_AT = coalesce(CANCEL_REQUESTED_AT, etl_craft_now()),
       CANCEL_ACKNOWLEDGED_AT = etl_craft_now(), OUTCOME_SOURCE = 'OWNER',
       ENDED_BY = :actor, ENDED_BY_KIND = :actor_kind
 WHERE ATTEMPT_ID = :attempt_id AND STATUS IN ('CLAIMED', 'RUNNING') AND OWNER_ID = :owner_id
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_request_cancel --
-- Ask the owner of a CLAIMED or RUNNING attempt to stop it.
UPDATE AUD_TASK_ATTEMPTS
   SET CANCEL_REQUESTED_AT = coalesce(CANCEL_REQUESTED_AT, etl_craft_now())
 WHERE ATTEMPT_ID = :attempt_id AND STATUS IN ('CLAIMED', 'RUNNING')
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_lose_attempt --
-- CLAIMED or RUNNING -> LOST by the reconciler once the lease expired and nobody can confirm the process.
UPDATE AUD_TASK_ATTEMPTS
   SET STATUS = 'LOST', ENDED_AT = etl_craft_now(), RETRYABLE = 'Y', ERROR_MESSAGE = :error_message,
       OUTCOME_SOURCE = 'RECONCILER', ENDED_BY = :actor, ENDED_BY_KIND = :actor_kind
 WHERE ATTEMPT_ID = :attempt_id AND STATUS IN ('CLAIMED', 'RUNNING')
   AND LEASE_EXPIRES_AT < etl_craft_now()
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_recover_attempt --
-- CLAIMED or RUNNING -> SUCCESS by the reconciler when the lease expired and the warehouse ledger proves the commit.
UPDATE AUD_TASK_ATTEMPTS
   SET STATUS = 'SUCCESS', ENDED_AT = etl_craft_now(), RETRYABLE = 'N',
       SOURCE_COUNT = :source_count, TARGET_COUNT = :target_count, INSERT_COUNT = :insert_count,
       UPDATE_COUNT = :update_count, DELETE_COUNT = :delete_count, DUPLICATE_COUNT = :duplicate_count,
       ROWS_WRITTEN = :rows_written, NEW_KEY_COUNT = :new_key_count,
       CHANGED_KEY_COUNT = :changed_key_count, UNCHANGED_KEY_COUNT = :unchanged_key_count,
       STALE_KEY_COUNT = :stale_key_count, SAME_TIME_KEY_COUNT = :same_time_key_count,
       REOPENED_KEY_COUNT = :reopened_key_count,
       ERROR_MESSAGE = :error_message, OUTCOME_SOURCE = 'LEDGER',
       ENDED_BY = :actor, ENDED_BY_KIND = :actor_kind
 WHERE ATTEMPT_ID = :attempt_id AND STATUS IN ('CLAIMED', 'RUNNING')
   AND LEASE_EXPIRES_AT < etl_craft_now()
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: transition_renew_attempt_lease --
-- The owner of a CLAIMED or RUNNING attempt extends its lease and heartbeat.
UPDATE AUD_TASK_ATTEMPTS
   SET LEASE_EXPIRES_AT = etl_craft_add_seconds(etl_craft_now(), :lease_seconds), HEARTBEAT_AT = etl_craft_now()
 WHERE ATTEMPT_ID = :attempt_id AND STATUS IN ('CLAIMED', 'RUNNING') AND OWNER_ID = :owner_id
RETURNING ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status;

-- name: attempt_state --
-- What a refused attempt transition found: the row's status and owner.
SELECT ATTEMPT_ID AS attempt_id, TASK_RUN_ID AS task_run_id, STATUS AS status, OWNER_ID AS owner_id,
       LEASE_EXPIRES_AT AS lease_expires_at, NOT_BEFORE AS not_before
  FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :attempt_id;

-- name: run_state --
-- What a refused run transition found: the row's status, owner and key.
SELECT PIPELINE_RUN_ID AS pipeline_run_id, PIPELINE_ID AS pipeline_id, RUN_KEY AS run_key,
       STATUS AS status, OWNER_ID AS owner_id, LEASE_EXPIRES_AT AS lease_expires_at
  FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :pipeline_run_id;

-- name: run_by_key --
-- The run of a pipeline with this key.
SELECT PIPELINE_RUN_ID AS pipeline_run_id, PIPELINE_ID AS pipeline_id, RUN_KEY AS run_key,
       STATUS AS status, OWNER_ID AS owner_id, LEASE_EXPIRES_AT AS lease_expires_at
  FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_ID = :pipeline_id AND RUN_KEY = :run_key;

-- name: task_run_state --
-- What a refused task-run transition found.
SELECT TASK_RUN_ID AS task_run_id, PIPELINE_RUN_ID AS pipeline_run_id, TASK_ID AS task_id,
       STATUS AS status, ATTEMPT_COUNT AS attempt_count
  FROM AUD_TASK_RUN_LOG WHERE TASK_RUN_ID = :task_run_id;

-- name: task_run_by_task --
-- The task run of a task in a run.
SELECT TASK_RUN_ID AS task_run_id, PIPELINE_RUN_ID AS pipeline_run_id, TASK_ID AS task_id,
       STATUS AS status, ATTEMPT_COUNT AS attempt_count
  FROM AUD_TASK_RUN_LOG WHERE PIPELINE_RUN_ID = :pipeline_run_id AND TASK_ID = :task_id;

-- name: live_attempts_of_task_run --
-- The live attempt of a task run, if any.
SELECT ATTEMPT_ID AS attempt_id, STATUS AS status, OWNER_ID AS owner_id
  FROM AUD_TASK_ATTEMPTS WHERE TASK_RUN_ID = :task_run_id AND STATUS IN ('QUEUED', 'CLAIMED', 'RUNNING');
