-- name: read_target_hash_version --
-- The change-hash version recorded for one warehouse target, if any.
SELECT HASH_VERSION AS hash_version, UPDATED_AT AS updated_at, UPDATED_BY AS updated_by
  FROM AUD_TARGET_HASH_VERSION
 WHERE WAREHOUSE_NAME = :warehouse_name AND TARGET_OBJECT = :target_object;

-- name: record_target_hash_version --
-- Record (insert or replace) the change-hash version of one warehouse target's HASH_KEY values.
INSERT INTO AUD_TARGET_HASH_VERSION
    (WAREHOUSE_NAME, TARGET_OBJECT, HASH_VERSION, UPDATED_AT, UPDATED_BY)
VALUES (:warehouse_name, :target_object, :hash_version, etl_craft_now(), :actor)
ON CONFLICT (WAREHOUSE_NAME, TARGET_OBJECT) DO UPDATE
   SET HASH_VERSION = excluded.HASH_VERSION, UPDATED_AT = excluded.UPDATED_AT,
       UPDATED_BY = excluded.UPDATED_BY;

-- name: record_first_target_hash_version --
-- Record the change-hash version of one warehouse target only when none is recorded yet.
INSERT INTO AUD_TARGET_HASH_VERSION
    (WAREHOUSE_NAME, TARGET_OBJECT, HASH_VERSION, UPDATED_AT, UPDATED_BY)
VALUES (:warehouse_name, :target_object, :hash_version, etl_craft_now(), :actor)
ON CONFLICT (WAREHOUSE_NAME, TARGET_OBJECT) DO NOTHING;

-- name: forget_target_hash_version --
-- Forget the change-hash version of a warehouse target that was dropped.
DELETE FROM AUD_TARGET_HASH_VERSION
 WHERE WAREHOUSE_NAME = :warehouse_name AND TARGET_OBJECT = :target_object;
