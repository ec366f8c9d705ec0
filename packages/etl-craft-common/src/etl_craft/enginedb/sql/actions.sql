-- name: record_action --
-- Record one requested state-changing command in AUD_ACTIONS (append-only), with its project.
INSERT INTO AUD_ACTIONS
    (STARTED_AT, ENDED_AT, ACTOR, ACTOR_KIND, HOST, COMMAND, ARGUMENTS, PROJECT_ID, OUTCOME, EXIT_CODE)
VALUES (:started_at, etl_craft_now(), :actor, :actor_kind, :host, :command, :arguments,
        (SELECT PROJECT_ID FROM CFG_PROJECTS
          WHERE PROJECT_CODE = CAST(:project_code AS VARCHAR(128)) AND ACTIVE_FLAG = 'Y'),
        'REQUESTED', NULL)
RETURNING ACTION_ID AS action_id;
