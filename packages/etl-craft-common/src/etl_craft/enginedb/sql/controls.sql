-- name: run_controls --
-- Whether a run is paused (its pipeline or its whole project) or has a cancellation pending.
SELECT (SELECT count(*) FROM AUD_PIPELINE_PAUSES z
         WHERE z.RESUMED_AT IS NULL AND z.PROJECT_ID = p.PROJECT_ID
           AND (z.PIPELINE_ID IS NULL OR z.PIPELINE_ID = p.PIPELINE_ID)) AS open_pauses,
       (SELECT i.KIND FROM AUD_RUN_INTERVENTIONS i
         WHERE i.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID AND i.TASK_RUN_ID IS NULL
           AND i.KIND IN ('CANCEL', 'REOPEN')
         ORDER BY i.INTERVENTION_ID DESC LIMIT 1) AS last_control
  FROM AUD_PIPELINES_RUN_LOG r JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID
 WHERE r.PIPELINE_RUN_ID = :pipeline_run_id;

-- name: record_intervention --
-- Record an operator's intervention on a run or task run, with its actor and reason.
INSERT INTO AUD_RUN_INTERVENTIONS
    (PIPELINE_RUN_ID, TASK_RUN_ID, KIND, FROM_STATUS, TO_STATUS, ROWS_WRITTEN, REASON,
     REQUESTED_AT, REQUESTED_BY, REQUESTED_BY_KIND)
VALUES (:pipeline_run_id, :task_run_id, :kind, :from_status, :to_status, :rows_written, :reason,
        etl_craft_now(), :actor, :actor_kind)
RETURNING INTERVENTION_ID AS intervention_id;
