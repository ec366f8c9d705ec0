-- si_transform: every client's landed interactions through the layers, once the three
-- ingestion pipelines have each finished a new run (the pipeline gate); it waits for the
-- reference pipeline's run too, so it never reads lookups a reference run is still rebuilding:
-- lnd -> prs (SCD2, deduplicated) -> cdc (this run's changes) -> pre_dm (with reference
-- data) -> business rules -> dm (SCD2, rejected keys left out). The volume table is rebuilt
-- whatever the merge did (ALWAYS), and any failure sends the alert (FAILURE edges, ANY).
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, DESCRIPTION, RUN_SCHEDULE, MAX_PARALLEL_TASKS)
SELECT PROJECT_ID, 'si_transform', 'Support interactions from lnd to the dm fact table', '5,20,35,50 * * * *', 4
  FROM CFG_PROJECTS WHERE PROJECT_CODE = 'demo' AND ACTIVE_FLAG = 'Y';

INSERT INTO CFG_PIPELINE_DEPENDENCY (PIPELINE_ID, DEPENDS_ON_PIPELINE_ID, DEPENDENCY_TYPE)
SELECT p.PIPELINE_ID, u.PIPELINE_ID, 'SUCCESS'
  FROM CFG_PIPELINES p
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo'
  JOIN CFG_PIPELINES u ON u.PROJECT_ID = p.PROJECT_ID AND u.ACTIVE_FLAG = 'Y'
   AND u.PIPELINE_CODE IN ('si_reference', 'si_client_alpha', 'si_client_beta', 'si_client_gamma')
 WHERE p.PIPELINE_CODE = 'si_transform' AND p.ACTIVE_FLAG = 'Y';

INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER)
SELECT p.PIPELINE_ID, x.TASK_CODE, x.DESCRIPTION, x.HANDLER
  FROM (SELECT 'setup_prs' AS TASK_CODE, 'Create prs.interactions (with SCD2 history) when it is missing' AS DESCRIPTION, 'SQL' AS HANDLER
        UNION ALL SELECT 'lnd_to_prs', 'Merge every client''s landed versions into prs, keeping history (SCD2)', 'SQL'
        UNION ALL SELECT 'setup_cdc', 'Create cdc.interactions when it is missing', 'SQL'
        UNION ALL SELECT 'prs_to_cdc', 'Replace cdc with the versions prs opened in this run', 'SQL'
        UNION ALL SELECT 'setup_pre_dm', 'Create pre_dm.interactions when it is missing', 'SQL'
        UNION ALL SELECT 'cdc_to_pre_dm', 'Join this run''s changes to the reference data', 'SQL'
        UNION ALL SELECT 'check_interactions', 'Judge this run''s interactions: hold back, reject or report', 'BUSINESS_RULES'
        UNION ALL SELECT 'setup_dm', 'Create dm.customer_support_fact (with SCD2 history) when it is missing', 'SQL'
        UNION ALL SELECT 'pre_dm_to_dm', 'Merge the interactions no rule rejects into the fact table (SCD2)', 'SQL'
        UNION ALL SELECT 'refresh_source_volume', 'Rebuild the per-client volume table, whatever the merge did', 'SQL') x
  JOIN CFG_PIPELINES p ON p.PIPELINE_CODE = 'si_transform' AND p.ACTIVE_FLAG = 'Y'
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo';

INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER, RUN_CONDITION)
SELECT p.PIPELINE_ID, 'notify_failure', 'E-mail the team when any task of the run fails',
       'EMAIL_ALERT', 'ANY'
  FROM CFG_PIPELINES p
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo'
 WHERE p.PIPELINE_CODE = 'si_transform' AND p.ACTIVE_FLAG = 'Y';

INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE)
SELECT d.TASK_ID, u.TASK_ID, x.DEPENDENCY_TYPE
  FROM (SELECT 'lnd_to_prs' AS DOWN, 'setup_prs' AS UP, 'SUCCESS' AS DEPENDENCY_TYPE
        UNION ALL SELECT 'prs_to_cdc', 'lnd_to_prs', 'SUCCESS'
        UNION ALL SELECT 'prs_to_cdc', 'setup_cdc', 'SUCCESS'
        UNION ALL SELECT 'cdc_to_pre_dm', 'prs_to_cdc', 'SUCCESS'
        UNION ALL SELECT 'cdc_to_pre_dm', 'setup_pre_dm', 'SUCCESS'
        UNION ALL SELECT 'check_interactions', 'cdc_to_pre_dm', 'SUCCESS'
        UNION ALL SELECT 'pre_dm_to_dm', 'check_interactions', 'SUCCESS'
        UNION ALL SELECT 'pre_dm_to_dm', 'setup_dm', 'SUCCESS'
        UNION ALL SELECT 'refresh_source_volume', 'pre_dm_to_dm', 'ALWAYS'
        UNION ALL SELECT 'notify_failure', 'setup_prs', 'FAILURE'
        UNION ALL SELECT 'notify_failure', 'lnd_to_prs', 'FAILURE'
        UNION ALL SELECT 'notify_failure', 'setup_cdc', 'FAILURE'
        UNION ALL SELECT 'notify_failure', 'prs_to_cdc', 'FAILURE'
        UNION ALL SELECT 'notify_failure', 'setup_pre_dm', 'FAILURE'
        UNION ALL SELECT 'notify_failure', 'cdc_to_pre_dm', 'FAILURE'
        UNION ALL SELECT 'notify_failure', 'check_interactions', 'FAILURE'
        UNION ALL SELECT 'notify_failure', 'setup_dm', 'FAILURE'
        UNION ALL SELECT 'notify_failure', 'pre_dm_to_dm', 'FAILURE'
        UNION ALL SELECT 'notify_failure', 'refresh_source_volume', 'FAILURE') x
  JOIN CFG_PIPELINES p ON p.PIPELINE_CODE = 'si_transform' AND p.ACTIVE_FLAG = 'Y'
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo'
  JOIN CFG_TASKS d ON d.PIPELINE_ID = p.PIPELINE_ID AND d.TASK_CODE = x.DOWN
  JOIN CFG_TASKS u ON u.PIPELINE_ID = p.PIPELINE_ID AND u.TASK_CODE = x.UP;

INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT k.TASK_ID, x.NAME, x.VALUE
  FROM (SELECT 'setup_prs' AS TASK, 'ACTION' AS NAME, 'SETUP_TABLE' AS VALUE
        UNION ALL SELECT 'setup_prs', 'TARGET_OBJECT', 'prs.interactions'
        UNION ALL SELECT 'setup_prs', 'SOURCE_SQL_FILE', 'transform/interactions_table.sql'
        UNION ALL SELECT 'lnd_to_prs', 'ACTION', 'SCD2_MERGE'
        UNION ALL SELECT 'lnd_to_prs', 'TARGET_OBJECT', 'prs.interactions'
        UNION ALL SELECT 'lnd_to_prs', 'SOURCE_SQL_FILE', 'transform/lnd_to_prs.sql'
        UNION ALL SELECT 'lnd_to_prs', 'MERGE_KEY', 'source_system, interaction_id'
        UNION ALL SELECT 'lnd_to_prs', 'MERGE_DEDUPE_ORDER', 'source_updated_at DESC'
        UNION ALL SELECT 'setup_cdc', 'ACTION', 'SETUP_TABLE'
        UNION ALL SELECT 'setup_cdc', 'TARGET_OBJECT', 'cdc.interactions'
        UNION ALL SELECT 'setup_cdc', 'SOURCE_SQL_FILE', 'transform/interactions_table.sql'
        UNION ALL SELECT 'prs_to_cdc', 'ACTION', 'OVERWRITE_TABLE'
        UNION ALL SELECT 'prs_to_cdc', 'TARGET_OBJECT', 'cdc.interactions'
        UNION ALL SELECT 'prs_to_cdc', 'SOURCE_SQL_FILE', 'transform/prs_to_cdc.sql'
        UNION ALL SELECT 'prs_to_cdc', 'PIPELINE_ID_SUBSTITUTION', 'Y'
        UNION ALL SELECT 'setup_pre_dm', 'ACTION', 'SETUP_TABLE'
        UNION ALL SELECT 'setup_pre_dm', 'TARGET_OBJECT', 'pre_dm.interactions'
        UNION ALL SELECT 'setup_pre_dm', 'SOURCE_SQL_FILE', 'transform/fact_table.sql'
        UNION ALL SELECT 'cdc_to_pre_dm', 'ACTION', 'OVERWRITE_TABLE'
        UNION ALL SELECT 'cdc_to_pre_dm', 'TARGET_OBJECT', 'pre_dm.interactions'
        UNION ALL SELECT 'cdc_to_pre_dm', 'SOURCE_SQL_FILE', 'transform/cdc_to_pre_dm.sql'
        UNION ALL SELECT 'check_interactions', 'TARGET_TABLE', 'pre_dm.interactions'
        UNION ALL SELECT 'setup_dm', 'ACTION', 'SETUP_TABLE'
        UNION ALL SELECT 'setup_dm', 'TARGET_OBJECT', 'dm.customer_support_fact'
        UNION ALL SELECT 'setup_dm', 'SOURCE_SQL_FILE', 'transform/fact_table.sql'
        UNION ALL SELECT 'pre_dm_to_dm', 'ACTION', 'SCD2_MERGE'
        UNION ALL SELECT 'pre_dm_to_dm', 'TARGET_OBJECT', 'dm.customer_support_fact'
        UNION ALL SELECT 'pre_dm_to_dm', 'SOURCE_SQL_FILE', 'transform/pre_dm_to_dm.sql'
        UNION ALL SELECT 'pre_dm_to_dm', 'MERGE_KEY', 'source_system, interaction_id'
        UNION ALL SELECT 'refresh_source_volume', 'ACTION', 'CREATE_TABLE'
        UNION ALL SELECT 'refresh_source_volume', 'TARGET_OBJECT', 'dm.source_volume'
        UNION ALL SELECT 'refresh_source_volume', 'SOURCE_SQL_FILE', 'transform/source_volume.sql'
        UNION ALL SELECT 'notify_failure', 'FLAVOUR', 'FAILURE'
        UNION ALL SELECT 'notify_failure', 'RECIPIENTS', 'support-data@example.com'
        UNION ALL SELECT 'notify_failure', 'SUBJECT', '[demo] {pipeline_code} run {run_id} {status}') x
  JOIN CFG_PIPELINES p ON p.PIPELINE_CODE = 'si_transform' AND p.ACTIVE_FLAG = 'Y'
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo'
  JOIN CFG_TASKS k ON k.PIPELINE_ID = p.PIPELINE_ID AND k.TASK_CODE = x.TASK;
