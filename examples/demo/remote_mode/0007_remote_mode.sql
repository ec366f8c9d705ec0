-- The demo under an external orchestrator (Orchestration mode: remote). Airflow judges a task
-- by its upstream tasks' states, never by their row counts or by a count of them, so the two
-- rules it cannot express become ones it can: each batch summary runs after every landing
-- (HAS_DATA -> SUCCESS; an empty batch gives an empty summary), and the reference summary waits
-- for all three merges instead of any two (N -> ALL). Copy this file into migrations/ and run
-- etl-craft migrate before etl-craft generate-yml.
UPDATE CFG_TASK_DEPENDENCY SET DEPENDENCY_TYPE = 'SUCCESS'
 WHERE DEPENDENCY_TYPE = 'HAS_DATA'
   AND TASK_ID IN (SELECT t.TASK_ID FROM CFG_TASKS t
                     JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID
                     JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo');
UPDATE CFG_TASKS SET RUN_CONDITION = 'ALL', REQUIRED_COUNT = NULL
 WHERE RUN_CONDITION = 'N'
   AND PIPELINE_ID IN (SELECT p.PIPELINE_ID FROM CFG_PIPELINES p
                         JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID AND j.PROJECT_CODE = 'demo');
