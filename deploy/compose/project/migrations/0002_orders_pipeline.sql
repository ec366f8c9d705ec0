-- orders: land the new orders (ingestion pool); create dm.orders when it is missing, merge
-- the orders into it and rebuild the totals per customer (warehouse pool). Manual only: runs are triggered through the API.
-- Every task retries, so an attempt lost with its worker runs again on another one.
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, DESCRIPTION)
SELECT PROJECT_ID, 'orders', 'Orders from the shop into dm.orders and dm.customer_totals'
  FROM CFG_PROJECTS WHERE PROJECT_CODE = 'shop' AND ACTIVE_FLAG = 'Y';

INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER)
SELECT p.PIPELINE_ID, t.code, t.description, t.handler
  FROM CFG_PIPELINES p
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
  JOIN (SELECT 'land_orders' AS code, 'Land the orders after the stored offset' AS description, 'PYTHON' AS handler
        UNION ALL SELECT 'setup_orders', 'Create dm.orders when it is missing', 'SQL'
        UNION ALL SELECT 'merge_orders', 'Merge the landed orders into dm.orders', 'SQL'
        UNION ALL SELECT 'customer_totals', 'Orders and revenue per customer', 'SQL') t ON 1 = 1
 WHERE j.PROJECT_CODE = 'shop' AND p.PIPELINE_CODE = 'orders' AND p.ACTIVE_FLAG = 'Y';

INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE)
SELECT d.TASK_ID, u.TASK_ID, 'SUCCESS'
  FROM CFG_PIPELINES p
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
  JOIN CFG_TASKS d ON d.PIPELINE_ID = p.PIPELINE_ID
  JOIN CFG_TASKS u ON u.PIPELINE_ID = p.PIPELINE_ID
  JOIN (SELECT 'setup_orders' AS task, 'land_orders' AS upstream
        UNION ALL SELECT 'merge_orders', 'setup_orders'
        UNION ALL SELECT 'customer_totals', 'merge_orders') e
    ON e.task = d.TASK_CODE AND e.upstream = u.TASK_CODE
 WHERE j.PROJECT_CODE = 'shop' AND p.PIPELINE_CODE = 'orders' AND p.ACTIVE_FLAG = 'Y';

INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT t.TASK_ID, v.name, v.value
  FROM CFG_PIPELINES p
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
  JOIN CFG_TASKS t ON t.PIPELINE_ID = p.PIPELINE_ID
  JOIN (SELECT 'land_orders' AS task, 'SCRIPT' AS name, 'land_orders.py' AS value
        UNION ALL SELECT 'land_orders', 'OFFSET_TYPE', 'INT'
        UNION ALL SELECT 'land_orders', 'TARGET_OBJECT', 'lnd.orders'
        UNION ALL SELECT 'land_orders', 'INPUT_PARAMS', '{"orders_per_run": 5}'
        UNION ALL SELECT 'land_orders', 'POOL', 'ingestion'
        UNION ALL SELECT 'land_orders', 'RETRIES', '2'
        UNION ALL SELECT 'land_orders', 'RETRY_DELAY_SECONDS', '0'
        UNION ALL SELECT 'setup_orders', 'ACTION', 'SETUP_TABLE'
        UNION ALL SELECT 'setup_orders', 'TARGET_OBJECT', 'dm.orders'
        UNION ALL SELECT 'setup_orders', 'SOURCE_SQL_FILE', 'merge_orders.sql'
        UNION ALL SELECT 'setup_orders', 'POOL', 'warehouse'
        UNION ALL SELECT 'setup_orders', 'RETRIES', '2'
        UNION ALL SELECT 'setup_orders', 'RETRY_DELAY_SECONDS', '0'
        UNION ALL SELECT 'merge_orders', 'ACTION', 'SCD1_MERGE'
        UNION ALL SELECT 'merge_orders', 'TARGET_OBJECT', 'dm.orders'
        UNION ALL SELECT 'merge_orders', 'SOURCE_SQL_FILE', 'merge_orders.sql'
        UNION ALL SELECT 'merge_orders', 'MERGE_KEY', 'order_id'
        UNION ALL SELECT 'merge_orders', 'POOL', 'warehouse'
        UNION ALL SELECT 'merge_orders', 'RETRIES', '2'
        UNION ALL SELECT 'merge_orders', 'RETRY_DELAY_SECONDS', '0'
        UNION ALL SELECT 'customer_totals', 'ACTION', 'CREATE_TABLE'
        UNION ALL SELECT 'customer_totals', 'TARGET_OBJECT', 'dm.customer_totals'
        UNION ALL SELECT 'customer_totals', 'SOURCE_SQL_FILE', 'customer_totals.sql'
        UNION ALL SELECT 'customer_totals', 'POOL', 'warehouse'
        UNION ALL SELECT 'customer_totals', 'RETRIES', '2'
        UNION ALL SELECT 'customer_totals', 'RETRY_DELAY_SECONDS', '0') v
    ON v.task = t.TASK_CODE
 WHERE j.PROJECT_CODE = 'shop' AND p.PIPELINE_CODE = 'orders' AND p.ACTIVE_FLAG = 'Y';
