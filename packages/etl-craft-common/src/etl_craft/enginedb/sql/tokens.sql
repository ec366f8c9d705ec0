-- name: insert_api_token --
-- Record a new API token by its SHA-256; the token itself is never stored.
INSERT INTO CFG_API_TOKENS (NAME, TOKEN_SHA256, ROLE, PROJECT_ID, EXPIRES_AT)
VALUES (:name, :token_sha256, :role,
        (SELECT PROJECT_ID FROM CFG_PROJECTS
          WHERE PROJECT_CODE = CAST(:project_code AS VARCHAR(128)) AND ACTIVE_FLAG = 'Y'),
        :expires_at)
RETURNING TOKEN_ID AS token_id;

-- name: live_api_token_by_name --
-- The unrevoked token with this name in any project (a live name is unique across projects;
-- expired tokens still hold theirs), with its project, so only its own project hears about it.
SELECT t.TOKEN_ID AS token_id, t.NAME AS name, t.ROLE AS role, j.PROJECT_CODE AS project_code,
       t.EXPIRES_AT AS expires_at, t.CREATED_BY AS created_by, t.CREATE_DATE AS created_at
  FROM CFG_API_TOKENS t
  LEFT JOIN CFG_PROJECTS j ON j.PROJECT_ID = t.PROJECT_ID
 WHERE t.NAME = CAST(:name AS VARCHAR(128)) AND t.REVOKED_AT IS NULL;

-- name: revoke_api_token --
-- Revoke the project's live token with this name; returns it, or nothing when the project has
-- no such live token (another project's token of that name is never touched).
UPDATE CFG_API_TOKENS SET REVOKED_AT = etl_craft_now()
 WHERE NAME = CAST(:name AS VARCHAR(128)) AND REVOKED_AT IS NULL
   AND PROJECT_ID = (SELECT PROJECT_ID FROM CFG_PROJECTS
                      WHERE PROJECT_CODE = CAST(:project_code AS VARCHAR(128)))
RETURNING TOKEN_ID AS token_id, NAME AS name, ROLE AS role, REVOKED_AT AS revoked_at;

-- name: api_tokens --
-- Every token of a project (or of every project), newest first, without any secret.
SELECT t.TOKEN_ID AS token_id, t.NAME AS name, t.ROLE AS role, j.PROJECT_CODE AS project_code,
       t.CREATED_BY AS created_by, t.CREATE_DATE AS created_at, t.EXPIRES_AT AS expires_at,
       t.REVOKED_AT AS revoked_at
  FROM CFG_API_TOKENS t
  LEFT JOIN CFG_PROJECTS j ON j.PROJECT_ID = t.PROJECT_ID
 WHERE t.PROJECT_ID IS NULL OR j.PROJECT_CODE = CAST(:project_code AS VARCHAR(128))
 ORDER BY t.TOKEN_ID DESC;

-- name: api_token_by_sha256 --
-- The token whose SHA-256 this is, with the project it is limited to, for authentication.
SELECT t.TOKEN_ID AS token_id, t.NAME AS name, t.ROLE AS role, j.PROJECT_CODE AS project_code,
       t.EXPIRES_AT AS expires_at, t.REVOKED_AT AS revoked_at
  FROM CFG_API_TOKENS t
  LEFT JOIN CFG_PROJECTS j ON j.PROJECT_ID = t.PROJECT_ID
 WHERE t.TOKEN_SHA256 = CAST(:token_sha256 AS VARCHAR(64));
