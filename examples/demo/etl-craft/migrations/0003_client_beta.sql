-- si_client_beta: Beta's event log arrives as CSV and redelivers some events; the offset
-- (TIMESTAMP) is the last event time landed.
-- The landing table is set up when missing; the batch summary runs only when the
-- landing wrote rows (HAS_DATA).
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, DESCRIPTION, RUN_SCHEDULE, MAX_PARALLEL_TASKS)
SELECT PROJECT_ID, 'si_client_beta', 'Client Beta''s support interactions into lnd', '*/15 * * * *', 4
  FROM CFG_PROJECTS WHERE PROJECT_CODE = 'demo' AND ACTIVE_FLAG = 'Y';

INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER)
SELECT p.PIPELINE_ID, x.TASK_CODE, x.DESCRIPTION, x.HANDLER
  FROM (SELECT 'setup_lnd_beta' AS TASK_CODE, 'Create lnd.client_beta_interactions when it is missing' AS DESCRIPTION, 'SQL' AS HANDLER
        UNION ALL SELECT 'land_beta', 'Land Beta''s new interactions after the stored offset', 'PYTHON'
        UNION ALL SELECT 'summarise_beta_batch', 'Summarise the batch just landed, when it landed rows', 'SQL') x
  JOIN CFG_PIPELINES p ON p.PIPELINE_CODE = 'si_client_beta' AND p.ACTIVE_FLAG = 'Y'
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo';

INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE)
SELECT d.TASK_ID, u.TASK_ID, x.DEPENDENCY_TYPE
  FROM (SELECT 'land_beta' AS DOWN, 'setup_lnd_beta' AS UP, 'SUCCESS' AS DEPENDENCY_TYPE
        UNION ALL SELECT 'summarise_beta_batch', 'land_beta', 'HAS_DATA') x
  JOIN CFG_PIPELINES p ON p.PIPELINE_CODE = 'si_client_beta' AND p.ACTIVE_FLAG = 'Y'
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo'
  JOIN CFG_TASKS d ON d.PIPELINE_ID = p.PIPELINE_ID AND d.TASK_CODE = x.DOWN
  JOIN CFG_TASKS u ON u.PIPELINE_ID = p.PIPELINE_ID AND u.TASK_CODE = x.UP;

INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT k.TASK_ID, x.NAME, x.VALUE
  FROM (SELECT 'setup_lnd_beta' AS TASK, 'ACTION' AS NAME, 'SETUP_TABLE' AS VALUE
        UNION ALL SELECT 'setup_lnd_beta', 'TARGET_OBJECT', 'lnd.client_beta_interactions'
        UNION ALL SELECT 'setup_lnd_beta', 'SOURCE_SQL_FILE', 'landing/lnd_interactions.sql'
        UNION ALL SELECT 'land_beta', 'SCRIPT', 'land_interactions.py'
        UNION ALL SELECT 'land_beta', 'OFFSET_TYPE', 'TIMESTAMP'
        UNION ALL SELECT 'land_beta', 'TARGET_OBJECT', 'lnd.client_beta_interactions'
        UNION ALL SELECT 'land_beta', 'INPUT_PARAMS', '{"client": "beta", "folder": "../sources/beta", "target": "lnd.client_beta_interactions"}'
        UNION ALL SELECT 'summarise_beta_batch', 'ACTION', 'CREATE_TABLE'
        UNION ALL SELECT 'summarise_beta_batch', 'TARGET_OBJECT', 'lnd.client_beta_last_batch'
        UNION ALL SELECT 'summarise_beta_batch', 'SOURCE_SQL_FILE', 'landing/summarise_beta_batch.sql'
        UNION ALL SELECT 'summarise_beta_batch', 'PIPELINE_ID_SUBSTITUTION', 'Y') x
  JOIN CFG_PIPELINES p ON p.PIPELINE_CODE = 'si_client_beta' AND p.ACTIVE_FLAG = 'Y'
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo'
  JOIN CFG_TASKS k ON k.PIPELINE_ID = p.PIPELINE_ID AND k.TASK_CODE = x.TASK;
