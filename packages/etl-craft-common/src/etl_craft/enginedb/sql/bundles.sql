-- name: insert_project_bundle --
-- Record a published bundle of the project's files; its id, or nothing for no such project.
INSERT INTO AUD_PROJECT_BUNDLES
    (PROJECT_ID, STORE_URL, MANIFEST, MANIFEST_SHA256, FILE_COUNT, CREATED_BY, CREATED_BY_KIND,
     CREATED_AT)
SELECT PROJECT_ID, :store_url, :manifest, :manifest_sha256, :file_count, :actor, :actor_kind,
       etl_craft_now()
  FROM CFG_PROJECTS
 WHERE PROJECT_CODE = CAST(:project_code AS VARCHAR(128)) AND ACTIVE_FLAG = 'Y'
RETURNING BUNDLE_ID AS bundle_id, CREATED_AT AS created_at;

-- name: project_bundle --
-- One bundle by its id, with its project.
SELECT b.BUNDLE_ID AS bundle_id, j.PROJECT_CODE AS project_code, b.STORE_URL AS store_url,
       b.MANIFEST AS manifest, b.MANIFEST_SHA256 AS manifest_sha256, b.FILE_COUNT AS file_count,
       b.CREATED_BY AS created_by, b.CREATED_AT AS created_at
  FROM AUD_PROJECT_BUNDLES b
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = b.PROJECT_ID
 WHERE b.BUNDLE_ID = :bundle_id;

-- name: latest_project_bundle --
-- The project's newest bundle: the one a run admitted now pins.
SELECT b.BUNDLE_ID AS bundle_id, j.PROJECT_CODE AS project_code, b.STORE_URL AS store_url,
       b.MANIFEST AS manifest, b.MANIFEST_SHA256 AS manifest_sha256, b.FILE_COUNT AS file_count,
       b.CREATED_BY AS created_by, b.CREATED_AT AS created_at
  FROM AUD_PROJECT_BUNDLES b
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = b.PROJECT_ID
 WHERE j.PROJECT_CODE = CAST(:project_code AS VARCHAR(128)) AND j.ACTIVE_FLAG = 'Y'
 ORDER BY b.BUNDLE_ID DESC
 LIMIT 1;
