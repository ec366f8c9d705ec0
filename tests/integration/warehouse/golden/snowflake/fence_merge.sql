MERGE INTO etl_craft.task_run_fence AS f USING (SELECT CAST(? AS NUMBER(38,0)) AS task_run_id, CAST(? AS NUMBER(38,0)) AS attempt_id, CAST(? AS TIMESTAMP_TZ(6)) AS fenced_at) AS e
ON f.task_run_id = e.task_run_id
WHEN MATCHED AND f.attempt_id <= e.attempt_id THEN UPDATE
SET attempt_id = e.attempt_id, fenced_at = e.fenced_at
WHEN NOT MATCHED THEN INSERT (task_run_id, attempt_id, fenced_at)
VALUES (e.task_run_id, e.attempt_id, e.fenced_at)
