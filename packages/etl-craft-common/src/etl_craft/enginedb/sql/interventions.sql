-- name: record_scoped_action --
-- Record one state-changing command on a pipeline, run or task in AUD_ACTIONS (append-only).
INSERT INTO AUD_ACTIONS
    (STARTED_AT, ENDED_AT, ACTOR, ACTOR_KIND, HOST, COMMAND, ARGUMENTS, PROJECT_ID, PIPELINE_ID,
     PIPELINE_RUN_ID, TASK_ID, OUTCOME, EXIT_CODE)
VALUES (:started_at, etl_craft_now(), :actor, :actor_kind, :host, :command, :arguments,
        (SELECT PROJECT_ID FROM CFG_PROJECTS
          WHERE PROJECT_CODE = CAST(:project_code AS VARCHAR(128)) AND ACTIVE_FLAG = 'Y'),
        :pipeline_id, :pipeline_run_id, :task_id, :outcome, :exit_code)
RETURNING ACTION_ID AS action_id;

-- name: open_pause --
-- Pause a pipeline (or, with a NULL pipeline, a whole project); nothing when that pause is open already.
INSERT INTO AUD_PIPELINE_PAUSES (PROJECT_ID, PIPELINE_ID, REASON, PAUSED_AT, PAUSED_BY, PAUSED_BY_KIND)
VALUES (:project_id, :pipeline_id, :reason, etl_craft_now(), :actor, :actor_kind)
ON CONFLICT DO NOTHING
RETURNING PAUSE_ID AS pause_id;

-- name: open_pause_of --
-- The open pause of one scope: a pipeline, or the whole project when :scope is 0.
SELECT PAUSE_ID AS pause_id, PIPELINE_ID AS pipeline_id, REASON AS reason, PAUSED_AT AS paused_at,
       PAUSED_BY AS paused_by, RESUMED_AT AS resumed_at, RESUMED_BY AS resumed_by
  FROM AUD_PIPELINE_PAUSES
 WHERE PROJECT_ID = :project_id AND COALESCE(PIPELINE_ID, 0) = :scope AND RESUMED_AT IS NULL;

-- name: pause_by_id --
-- One pause, open or resumed.
SELECT PAUSE_ID AS pause_id, PIPELINE_ID AS pipeline_id, REASON AS reason, PAUSED_AT AS paused_at,
       PAUSED_BY AS paused_by, RESUMED_AT AS resumed_at, RESUMED_BY AS resumed_by
  FROM AUD_PIPELINE_PAUSES WHERE PAUSE_ID = :pause_id;

-- name: close_pause --
-- Resume the open pause of one scope (a pipeline, or the whole project when :scope is 0).
UPDATE AUD_PIPELINE_PAUSES
   SET RESUMED_AT = etl_craft_now(), RESUMED_BY = :actor, RESUMED_BY_KIND = :actor_kind
 WHERE PROJECT_ID = :project_id AND COALESCE(PIPELINE_ID, 0) = :scope AND RESUMED_AT IS NULL
RETURNING PAUSE_ID AS pause_id;

-- name: operator_decided_task_runs --
-- The task runs of a run that an operator skipped or marked, with the latest such intervention.
SELECT i.TASK_RUN_ID AS task_run_id, i.KIND AS kind
  FROM AUD_RUN_INTERVENTIONS i
 WHERE i.PIPELINE_RUN_ID = :pipeline_run_id AND i.KIND IN ('SKIP', 'MARK')
   AND i.INTERVENTION_ID = (SELECT max(j.INTERVENTION_ID) FROM AUD_RUN_INTERVENTIONS j
                             WHERE j.TASK_RUN_ID = i.TASK_RUN_ID AND j.KIND IN ('SKIP', 'MARK'));

-- name: audit_actions --
-- The newest recorded commands since a time, of one pipeline or of the project (and the
-- project-less bootstrap ones), oldest first.
SELECT * FROM (
SELECT a.ACTION_ID AS action_id, a.STARTED_AT AS started_at, a.ACTOR AS actor,
       a.ACTOR_KIND AS actor_kind, a.HOST AS host, a.COMMAND AS command, a.ARGUMENTS AS arguments,
       a.OUTCOME AS outcome, a.EXIT_CODE AS exit_code, p.PIPELINE_CODE AS pipeline_code,
       a.PIPELINE_RUN_ID AS pipeline_run_id, k.TASK_CODE AS task_code
  FROM AUD_ACTIONS a
  LEFT JOIN CFG_PIPELINES p ON p.PIPELINE_ID = a.PIPELINE_ID
  LEFT JOIN CFG_TASKS k ON k.TASK_ID = a.TASK_ID
 WHERE a.STARTED_AT >= :since
   AND (a.PROJECT_ID IS NULL OR a.PROJECT_ID = :project_id)
   AND (CAST(:pipeline_id AS BIGINT) IS NULL OR a.PIPELINE_ID = :pipeline_id)
 ORDER BY a.ACTION_ID DESC
 LIMIT :limit) newest
 ORDER BY action_id;

-- name: audit_metadata_changes --
-- The newest changed CFG_ rows since a time, oldest first; for one pipeline, its own row and
-- its tasks' rows.
SELECT * FROM (
SELECT c.CHANGE_ID AS change_id, c.CHANGED_AT AS changed_at, c.ACTOR AS actor,
       c.ACTOR_KIND AS actor_kind, c.TABLE_NAME AS table_name, c.ROW_KEY AS row_key,
       c.OPERATION AS operation, c.BEFORE_JSON AS before_json, c.AFTER_JSON AS after_json,
       c.MIGRATION AS migration
  FROM AUD_METADATA_CHANGES c
 WHERE c.CHANGED_AT >= :since
   AND (CAST(:pipeline_id AS BIGINT) IS NULL
        OR (c.TABLE_NAME = 'CFG_PIPELINES' AND c.ROW_KEY = CAST(CAST(:pipeline_id AS BIGINT) AS VARCHAR(256)))
        OR (c.TABLE_NAME = 'CFG_TASKS' AND c.ROW_KEY IN (
              SELECT CAST(k.TASK_ID AS VARCHAR(256)) FROM CFG_TASKS k WHERE k.PIPELINE_ID = :pipeline_id)))
 ORDER BY c.CHANGE_ID DESC
 LIMIT :limit) newest
 ORDER BY change_id;

-- name: metadata_changes_of_migration --
-- The CFG_ rows one project migration file changed, in the order it changed them.
SELECT c.CHANGE_ID AS change_id, c.CHANGED_AT AS changed_at, c.ACTOR AS actor,
       c.ACTOR_KIND AS actor_kind, c.TABLE_NAME AS table_name, c.ROW_KEY AS row_key,
       c.OPERATION AS operation, c.BEFORE_JSON AS before_json, c.AFTER_JSON AS after_json,
       c.MIGRATION AS migration
  FROM AUD_METADATA_CHANGES c
 WHERE c.MIGRATION = :migration
 ORDER BY c.CHANGE_ID;
