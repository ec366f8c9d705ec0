-- The demo's first pipeline: set up the landing table, land the day's orders, build the
-- daily summary, then publish it with a merge.
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, DESCRIPTION, RUN_SCHEDULE, MAX_PARALLEL_TASKS)
SELECT PROJECT_ID, 'orders', 'Orders from the shop into the warehouse', '0 6 * * *', 2
  FROM CFG_PROJECTS WHERE PROJECT_CODE = 'demo' AND ACTIVE_FLAG = 'Y';

INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER)
SELECT PIPELINE_ID, 'setup_orders', 'Create the landing table when it is missing', 'SQL'
  FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER)
SELECT PIPELINE_ID, 'land_orders', 'Land the day''s orders', 'SQL'
  FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER)
SELECT PIPELINE_ID, 'daily_summary', 'Orders and revenue per day', 'SQL'
  FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER)
SELECT PIPELINE_ID, 'setup_published', 'Create the published table when it is missing', 'SQL'
  FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER)
SELECT PIPELINE_ID, 'publish_summary', 'Merge the summary into the published table', 'SQL'
  FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';

INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE)
SELECT d.TASK_ID, u.TASK_ID, x.DEPENDENCY_TYPE
  FROM (SELECT 'land_orders' AS DOWN, 'setup_orders' AS UP, 'SUCCESS' AS DEPENDENCY_TYPE
        UNION ALL SELECT 'daily_summary', 'land_orders', 'SUCCESS'
        UNION ALL SELECT 'setup_published', 'daily_summary', 'SUCCESS'
        UNION ALL SELECT 'publish_summary', 'daily_summary', 'HAS_DATA'
        UNION ALL SELECT 'publish_summary', 'setup_published', 'SUCCESS') x
  JOIN CFG_TASKS d ON d.TASK_CODE = x.DOWN
  JOIN CFG_TASKS u ON u.TASK_CODE = x.UP AND u.PIPELINE_ID = d.PIPELINE_ID;

INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT k.TASK_ID, x.NAME, x.VALUE
  FROM (SELECT 'setup_orders' AS TASK, 'ACTION' AS NAME, 'SETUP_TABLE' AS VALUE
        UNION ALL SELECT 'setup_orders', 'TARGET_OBJECT', 'lnd.orders'
        UNION ALL SELECT 'setup_orders', 'SOURCE_SQL_FILE', 'land_orders.sql'
        UNION ALL SELECT 'setup_orders', 'PIPELINE_ID_SUBSTITUTION', 'Y'
        UNION ALL SELECT 'land_orders', 'ACTION', 'APPEND_TABLE'
        UNION ALL SELECT 'land_orders', 'TARGET_OBJECT', 'lnd.orders'
        UNION ALL SELECT 'land_orders', 'SOURCE_SQL_FILE', 'land_orders.sql'
        UNION ALL SELECT 'land_orders', 'PIPELINE_ID_SUBSTITUTION', 'Y'
        UNION ALL SELECT 'daily_summary', 'ACTION', 'CREATE_TABLE'
        UNION ALL SELECT 'daily_summary', 'TARGET_OBJECT', 'dm.daily_orders'
        UNION ALL SELECT 'daily_summary', 'SOURCE_SQL_FILE', 'daily_summary.sql'
        UNION ALL SELECT 'setup_published', 'ACTION', 'SETUP_TABLE'
        UNION ALL SELECT 'setup_published', 'TARGET_OBJECT', 'pub.daily_orders'
        UNION ALL SELECT 'setup_published', 'SOURCE_SQL_FILE', 'publish_summary.sql'
        UNION ALL SELECT 'publish_summary', 'ACTION', 'SCD1_MERGE'
        UNION ALL SELECT 'publish_summary', 'TARGET_OBJECT', 'pub.daily_orders'
        UNION ALL SELECT 'publish_summary', 'MERGE_KEY', 'order_date'
        UNION ALL SELECT 'publish_summary', 'SOURCE_SQL_FILE', 'publish_summary.sql') x
  JOIN CFG_TASKS k ON k.TASK_CODE = x.TASK;
