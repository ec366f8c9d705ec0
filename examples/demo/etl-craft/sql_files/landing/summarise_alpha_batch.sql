-- What this run landed from Alpha, by status: rebuilt only when the run landed rows.
SELECT status,
       COUNT(*) AS interactions,
       MIN(source_updated_at) AS first_change,
       MAX(source_updated_at) AS last_change
  FROM lnd.client_alpha_interactions
 WHERE PIPELINE_RUN_ID = $$pipeline_run_id
 GROUP BY status
