-- name: clone_pipelines_run_log_changed --
-- Up to :batch rows of AUD_PIPELINES_RUN_LOG written after the watermark (UPDATED_AT, then PIPELINE_RUN_ID) and by :until_at, in that order.
SELECT * FROM AUD_PIPELINES_RUN_LOG
 WHERE (UPDATED_AT, PIPELINE_RUN_ID) > (:after_at, :after_key) AND UPDATED_AT <= :until_at
 ORDER BY UPDATED_AT, PIPELINE_RUN_ID
 LIMIT :batch;

-- name: clone_pipelines_run_log_kept --
-- The rows of AUD_PIPELINES_RUN_LOG still there between two keys: a purge deleted the others.
SELECT PIPELINE_RUN_ID AS id FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID BETWEEN :first_id AND :last_id ORDER BY PIPELINE_RUN_ID;

-- name: clone_task_run_log_changed --
-- Up to :batch rows of AUD_TASK_RUN_LOG written after the watermark (UPDATED_AT, then TASK_RUN_ID) and by :until_at, in that order.
SELECT * FROM AUD_TASK_RUN_LOG
 WHERE (UPDATED_AT, TASK_RUN_ID) > (:after_at, :after_key) AND UPDATED_AT <= :until_at
 ORDER BY UPDATED_AT, TASK_RUN_ID
 LIMIT :batch;

-- name: clone_task_run_log_kept --
-- The rows of AUD_TASK_RUN_LOG still there between two keys: a purge deleted the others.
SELECT TASK_RUN_ID AS id FROM AUD_TASK_RUN_LOG WHERE TASK_RUN_ID BETWEEN :first_id AND :last_id ORDER BY TASK_RUN_ID;

-- name: clone_task_attempts_changed --
-- Up to :batch rows of AUD_TASK_ATTEMPTS written after the watermark (UPDATED_AT, then ATTEMPT_ID) and by :until_at, in that order.
SELECT * FROM AUD_TASK_ATTEMPTS
 WHERE (UPDATED_AT, ATTEMPT_ID) > (:after_at, :after_key) AND UPDATED_AT <= :until_at
 ORDER BY UPDATED_AT, ATTEMPT_ID
 LIMIT :batch;

-- name: clone_task_attempts_kept --
-- The rows of AUD_TASK_ATTEMPTS still there between two keys: a purge deleted the others.
SELECT ATTEMPT_ID AS id FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID BETWEEN :first_id AND :last_id ORDER BY ATTEMPT_ID;

-- name: clone_gate_decisions_changed --
-- Up to :batch rows of AUD_GATE_DECISIONS written after the watermark (UPDATED_AT, then DECISION_ID) and by :until_at, in that order.
SELECT * FROM AUD_GATE_DECISIONS
 WHERE (UPDATED_AT, DECISION_ID) > (:after_at, :after_key) AND UPDATED_AT <= :until_at
 ORDER BY UPDATED_AT, DECISION_ID
 LIMIT :batch;

-- name: clone_gate_decisions_kept --
-- The rows of AUD_GATE_DECISIONS still there between two keys: a purge deleted the others.
SELECT DECISION_ID AS id FROM AUD_GATE_DECISIONS WHERE DECISION_ID BETWEEN :first_id AND :last_id ORDER BY DECISION_ID;

-- name: clone_gate_waits_changed --
-- Up to :batch rows of AUD_GATE_WAITS written after the watermark (UPDATED_AT, then GATE_WAIT_ID) and by :until_at, in that order.
SELECT * FROM AUD_GATE_WAITS
 WHERE (UPDATED_AT, GATE_WAIT_ID) > (:after_at, :after_key) AND UPDATED_AT <= :until_at
 ORDER BY UPDATED_AT, GATE_WAIT_ID
 LIMIT :batch;

-- name: clone_gate_waits_kept --
-- The rows of AUD_GATE_WAITS still there between two keys: a purge deleted the others.
SELECT GATE_WAIT_ID AS id FROM AUD_GATE_WAITS WHERE GATE_WAIT_ID BETWEEN :first_id AND :last_id ORDER BY GATE_WAIT_ID;

-- name: clone_dependency_consumption_changed --
-- Up to :batch rows of AUD_DEPENDENCY_CONSUMPTION written after the watermark (UPDATED_AT, then CONSUMPTION_ID) and by :until_at, in that order.
SELECT * FROM AUD_DEPENDENCY_CONSUMPTION
 WHERE (UPDATED_AT, CONSUMPTION_ID) > (:after_at, :after_key) AND UPDATED_AT <= :until_at
 ORDER BY UPDATED_AT, CONSUMPTION_ID
 LIMIT :batch;

-- name: clone_dependency_consumption_kept --
-- The rows of AUD_DEPENDENCY_CONSUMPTION still there between two keys: a purge deleted the others.
SELECT CONSUMPTION_ID AS id FROM AUD_DEPENDENCY_CONSUMPTION WHERE CONSUMPTION_ID BETWEEN :first_id AND :last_id ORDER BY CONSUMPTION_ID;

-- name: clone_run_interventions_changed --
-- Up to :batch rows of AUD_RUN_INTERVENTIONS written after the watermark (UPDATED_AT, then INTERVENTION_ID) and by :until_at, in that order.
SELECT * FROM AUD_RUN_INTERVENTIONS
 WHERE (UPDATED_AT, INTERVENTION_ID) > (:after_at, :after_key) AND UPDATED_AT <= :until_at
 ORDER BY UPDATED_AT, INTERVENTION_ID
 LIMIT :batch;

-- name: clone_run_interventions_kept --
-- The rows of AUD_RUN_INTERVENTIONS still there between two keys: a purge deleted the others.
SELECT INTERVENTION_ID AS id FROM AUD_RUN_INTERVENTIONS WHERE INTERVENTION_ID BETWEEN :first_id AND :last_id ORDER BY INTERVENTION_ID;

-- name: clone_pipeline_pauses_changed --
-- Up to :batch rows of AUD_PIPELINE_PAUSES written after the watermark (UPDATED_AT, then PAUSE_ID) and by :until_at, in that order.
SELECT * FROM AUD_PIPELINE_PAUSES
 WHERE (UPDATED_AT, PAUSE_ID) > (:after_at, :after_key) AND UPDATED_AT <= :until_at
 ORDER BY UPDATED_AT, PAUSE_ID
 LIMIT :batch;

-- name: clone_pipeline_pauses_kept --
-- The rows of AUD_PIPELINE_PAUSES still there between two keys: a purge deleted the others.
SELECT PAUSE_ID AS id FROM AUD_PIPELINE_PAUSES WHERE PAUSE_ID BETWEEN :first_id AND :last_id ORDER BY PAUSE_ID;

-- name: clone_actions_changed --
-- Up to :batch rows of AUD_ACTIONS written after the watermark (UPDATED_AT, then ACTION_ID) and by :until_at, in that order.
SELECT * FROM AUD_ACTIONS
 WHERE (UPDATED_AT, ACTION_ID) > (:after_at, :after_key) AND UPDATED_AT <= :until_at
 ORDER BY UPDATED_AT, ACTION_ID
 LIMIT :batch;

-- name: clone_actions_kept --
-- The rows of AUD_ACTIONS still there between two keys: a purge deleted the others.
SELECT ACTION_ID AS id FROM AUD_ACTIONS WHERE ACTION_ID BETWEEN :first_id AND :last_id ORDER BY ACTION_ID;

-- name: clone_metadata_changes_changed --
-- Up to :batch rows of AUD_METADATA_CHANGES written after the watermark (UPDATED_AT, then CHANGE_ID) and by :until_at, in that order.
SELECT * FROM AUD_METADATA_CHANGES
 WHERE (UPDATED_AT, CHANGE_ID) > (:after_at, :after_key) AND UPDATED_AT <= :until_at
 ORDER BY UPDATED_AT, CHANGE_ID
 LIMIT :batch;

-- name: clone_metadata_changes_kept --
-- The rows of AUD_METADATA_CHANGES still there between two keys: a purge deleted the others.
SELECT CHANGE_ID AS id FROM AUD_METADATA_CHANGES WHERE CHANGE_ID BETWEEN :first_id AND :last_id ORDER BY CHANGE_ID;

-- name: clone_downstream_reruns_changed --
-- Up to :batch rows of AUD_DOWNSTREAM_RERUNS written after the watermark (UPDATED_AT, then RERUN_ID) and by :until_at, in that order.
SELECT * FROM AUD_DOWNSTREAM_RERUNS
 WHERE (UPDATED_AT, RERUN_ID) > (:after_at, :after_key) AND UPDATED_AT <= :until_at
 ORDER BY UPDATED_AT, RERUN_ID
 LIMIT :batch;

-- name: clone_downstream_reruns_kept --
-- The rows of AUD_DOWNSTREAM_RERUNS still there between two keys: a purge deleted the others.
SELECT RERUN_ID AS id FROM AUD_DOWNSTREAM_RERUNS WHERE RERUN_ID BETWEEN :first_id AND :last_id ORDER BY RERUN_ID;
