-- si_reference: the lookups every client's interactions are joined to. Each table is set up
-- when missing and kept current with an SCD1 merge; the summary runs once two of the three
-- merges are in (RUN_CONDITION N).
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, DESCRIPTION, RUN_SCHEDULE, MAX_PARALLEL_TASKS)
SELECT PROJECT_ID, 'si_reference', 'Support areas, agents and customer types for the warehouse',
       '0 5 * * *', 4
  FROM CFG_PROJECTS WHERE PROJECT_CODE = 'demo' AND ACTIVE_FLAG = 'Y';

INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER)
SELECT p.PIPELINE_ID, x.TASK_CODE, x.DESCRIPTION, 'SQL'
  FROM (SELECT 'setup_support_areas' AS TASK_CODE, 'Create ref.support_areas when it is missing' AS DESCRIPTION
        UNION ALL SELECT 'merge_support_areas', 'Keep ref.support_areas current (SCD1)'
        UNION ALL SELECT 'setup_agents', 'Create ref.agents when it is missing'
        UNION ALL SELECT 'merge_agents', 'Keep ref.agents current (SCD1)'
        UNION ALL SELECT 'setup_customer_types', 'Create ref.customer_types when it is missing'
        UNION ALL SELECT 'merge_customer_types', 'Keep ref.customer_types current (SCD1)') x
  JOIN CFG_PIPELINES p ON p.PIPELINE_CODE = 'si_reference' AND p.ACTIVE_FLAG = 'Y'
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo';

INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER, RUN_CONDITION, REQUIRED_COUNT)
SELECT p.PIPELINE_ID, 'summarise_reference', 'Count each lookup''s rows once two merges are in',
       'SQL', 'N', 2
  FROM CFG_PIPELINES p
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo'
 WHERE p.PIPELINE_CODE = 'si_reference' AND p.ACTIVE_FLAG = 'Y';

INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE)
SELECT d.TASK_ID, u.TASK_ID, 'SUCCESS'
  FROM (SELECT 'merge_support_areas' AS DOWN, 'setup_support_areas' AS UP
        UNION ALL SELECT 'merge_agents', 'setup_agents'
        UNION ALL SELECT 'merge_customer_types', 'setup_customer_types'
        UNION ALL SELECT 'summarise_reference', 'merge_support_areas'
        UNION ALL SELECT 'summarise_reference', 'merge_agents'
        UNION ALL SELECT 'summarise_reference', 'merge_customer_types') x
  JOIN CFG_PIPELINES p ON p.PIPELINE_CODE = 'si_reference' AND p.ACTIVE_FLAG = 'Y'
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo'
  JOIN CFG_TASKS d ON d.PIPELINE_ID = p.PIPELINE_ID AND d.TASK_CODE = x.DOWN
  JOIN CFG_TASKS u ON u.PIPELINE_ID = p.PIPELINE_ID AND u.TASK_CODE = x.UP;

INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT k.TASK_ID, x.NAME, x.VALUE
  FROM (SELECT 'setup_support_areas' AS TASK, 'ACTION' AS NAME, 'SETUP_TABLE' AS VALUE
        UNION ALL SELECT 'setup_support_areas', 'TARGET_OBJECT', 'ref.support_areas'
        UNION ALL SELECT 'setup_support_areas', 'SOURCE_SQL_FILE', 'reference/support_areas.sql'
        UNION ALL SELECT 'merge_support_areas', 'ACTION', 'SCD1_MERGE'
        UNION ALL SELECT 'merge_support_areas', 'TARGET_OBJECT', 'ref.support_areas'
        UNION ALL SELECT 'merge_support_areas', 'SOURCE_SQL_FILE', 'reference/support_areas.sql'
        UNION ALL SELECT 'merge_support_areas', 'MERGE_KEY', 'area_code'
        UNION ALL SELECT 'setup_agents', 'ACTION', 'SETUP_TABLE'
        UNION ALL SELECT 'setup_agents', 'TARGET_OBJECT', 'ref.agents'
        UNION ALL SELECT 'setup_agents', 'SOURCE_SQL_FILE', 'reference/agents.sql'
        UNION ALL SELECT 'merge_agents', 'ACTION', 'SCD1_MERGE'
        UNION ALL SELECT 'merge_agents', 'TARGET_OBJECT', 'ref.agents'
        UNION ALL SELECT 'merge_agents', 'SOURCE_SQL_FILE', 'reference/agents.sql'
        UNION ALL SELECT 'merge_agents', 'MERGE_KEY', 'agent_id'
        UNION ALL SELECT 'setup_customer_types', 'ACTION', 'SETUP_TABLE'
        UNION ALL SELECT 'setup_customer_types', 'TARGET_OBJECT', 'ref.customer_types'
        UNION ALL SELECT 'setup_customer_types', 'SOURCE_SQL_FILE', 'reference/customer_types.sql'
        UNION ALL SELECT 'merge_customer_types', 'ACTION', 'SCD1_MERGE'
        UNION ALL SELECT 'merge_customer_types', 'TARGET_OBJECT', 'ref.customer_types'
        UNION ALL SELECT 'merge_customer_types', 'SOURCE_SQL_FILE', 'reference/customer_types.sql'
        UNION ALL SELECT 'merge_customer_types', 'MERGE_KEY', 'customer_type'
        UNION ALL SELECT 'summarise_reference', 'ACTION', 'CREATE_TABLE'
        UNION ALL SELECT 'summarise_reference', 'TARGET_OBJECT', 'ref.reference_summary'
        UNION ALL SELECT 'summarise_reference', 'SOURCE_SQL_FILE', 'reference/reference_summary.sql') x
  JOIN CFG_PIPELINES p ON p.PIPELINE_CODE = 'si_reference' AND p.ACTIVE_FLAG = 'Y'
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo'
  JOIN CFG_TASKS k ON k.PIPELINE_ID = p.PIPELINE_ID AND k.TASK_CODE = x.TASK;
