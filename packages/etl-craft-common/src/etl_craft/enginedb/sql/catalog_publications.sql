-- name: catalog_publication --
-- The URL a project's catalog is published at, if it has been published.
SELECT c.PUBLIC_URL AS public_url, c.HOSTING AS hosting, c.PREVIOUS_URL AS previous_url,
       c.FIRST_PUBLISHED_AT AS first_published_at, c.PUBLISHED_AT AS published_at,
       c.PUBLISHED_BY AS published_by
  FROM AUD_CATALOG_PUBLICATIONS c
 WHERE c.PROJECT_ID = :project_id;

-- name: record_first_catalog_publication --
-- Record a project's first publication; a concurrent first one wins and this one changes nothing.
INSERT INTO AUD_CATALOG_PUBLICATIONS
    (PROJECT_ID, PUBLIC_URL, HOSTING, PREVIOUS_URL, FIRST_PUBLISHED_AT, PUBLISHED_AT, PUBLISHED_BY)
VALUES (:project_id, :public_url, :hosting, NULL, etl_craft_now(), etl_craft_now(), :actor)
ON CONFLICT (PROJECT_ID) DO NOTHING;

-- name: renew_catalog_publication --
-- A server publishes again at the recorded URL: note when and by whom.
UPDATE AUD_CATALOG_PUBLICATIONS
   SET PUBLISHED_AT = etl_craft_now(), PUBLISHED_BY = :actor, HOSTING = :hosting
 WHERE PROJECT_ID = :project_id AND PUBLIC_URL = :public_url;

-- name: replace_catalog_publication --
-- Move a project's publication from the URL it was read at to a new one (explicitly asked for).
UPDATE AUD_CATALOG_PUBLICATIONS
   SET PUBLIC_URL = :public_url, HOSTING = :hosting, PREVIOUS_URL = PUBLIC_URL,
       FIRST_PUBLISHED_AT = etl_craft_now(), PUBLISHED_AT = etl_craft_now(), PUBLISHED_BY = :actor
 WHERE PROJECT_ID = :project_id AND PUBLIC_URL = :previous_url;
