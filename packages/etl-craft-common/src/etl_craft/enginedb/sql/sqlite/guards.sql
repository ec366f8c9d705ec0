-- name: reserved_tables --
-- Every etl-craft table (AUD_, CFG_ and the migration ledger) in the Engine DB, with its first
-- primary-key column.
SELECT upper(m.name) AS table_name,
       (SELECT upper(p.name) FROM pragma_table_info(m.name) p WHERE p.pk = 1) AS key_column
  FROM sqlite_master m
 WHERE m.type = 'table'
   AND (upper(m.name) LIKE 'AUD\_%' ESCAPE '\' OR upper(m.name) LIKE 'CFG\_%' ESCAPE '\'
        OR upper(m.name) = 'SCHEMA_MIGRATIONS')
 ORDER BY m.name;

-- name: table_columns --
-- The columns of one table, in order.
SELECT upper(name) AS column_name FROM pragma_table_info(:table_name) ORDER BY cid;

-- name: guard_template --
-- Refuse INSERT, UPDATE and DELETE on {table} from a connection etl-craft did not mark.
DROP TRIGGER IF EXISTS etl_craft_guard_insert_{table};
CREATE TRIGGER etl_craft_guard_insert_{table} BEFORE INSERT ON {table}
WHEN etl_craft_actor() IS NULL
BEGIN SELECT RAISE(ABORT, '{table} is written only by etl-craft; {remedy}'); END;
DROP TRIGGER IF EXISTS etl_craft_guard_update_{table};
CREATE TRIGGER etl_craft_guard_update_{table} BEFORE UPDATE ON {table}
WHEN etl_craft_actor() IS NULL
BEGIN SELECT RAISE(ABORT, '{table} is written only by etl-craft; {remedy}'); END;
DROP TRIGGER IF EXISTS etl_craft_guard_delete_{table};
CREATE TRIGGER etl_craft_guard_delete_{table} BEFORE DELETE ON {table}
WHEN etl_craft_actor() IS NULL
BEGIN SELECT RAISE(ABORT, '{table} is written only by etl-craft; {remedy}'); END;

-- name: append_only_template --
-- Refuse UPDATE and DELETE of recorded history in {table}, even from etl-craft; the one UPDATE let
-- through stamps UPDATED_AT of a row just inserted ({first_stamp}) and changes nothing else.
DROP TRIGGER IF EXISTS etl_craft_history_update_{table};
CREATE TRIGGER etl_craft_history_update_{table} BEFORE UPDATE ON {table}
WHEN NOT ({first_stamp})
BEGIN SELECT RAISE(ABORT, '{table} is append-only: UPDATE of a recorded row is refused, even from etl-craft'); END;
DROP TRIGGER IF EXISTS etl_craft_history_delete_{table};
CREATE TRIGGER etl_craft_history_delete_{table} BEFORE DELETE ON {table}
BEGIN SELECT RAISE(ABORT, '{table} is append-only: DELETE of a recorded row is refused, even from etl-craft'); END;

-- name: purgeable_template --
-- Refuse UPDATE and DELETE of recorded history in {table}, except a DELETE by etl-craft purge,
-- whose connection names the AUD_ACTIONS row that records it, and the stamp of a row just inserted.
DROP TRIGGER IF EXISTS etl_craft_history_update_{table};
CREATE TRIGGER etl_craft_history_update_{table} BEFORE UPDATE ON {table}
WHEN NOT ({first_stamp})
BEGIN SELECT RAISE(ABORT, '{table} is append-only: UPDATE of a recorded row is refused, even from etl-craft'); END;
DROP TRIGGER IF EXISTS etl_craft_history_delete_{table};
CREATE TRIGGER etl_craft_history_delete_{table} BEFORE DELETE ON {table}
WHEN NOT EXISTS (SELECT 1 FROM AUD_ACTIONS WHERE ACTION_ID = etl_craft_purge() AND COMMAND = 'purge')
BEGIN SELECT RAISE(ABORT, '{table} is append-only: DELETE of a recorded row is refused, even from etl-craft; only etl-craft purge removes history past its retention'); END;

-- name: terminal_immutable_template --
-- Refuse UPDATE and DELETE of an attempt in {table} once it has ended, except a purge's DELETE and
-- the stamp of the change that ended it ({restamp}: only UPDATED_AT changes).
DROP TRIGGER IF EXISTS etl_craft_history_update_{table};
CREATE TRIGGER etl_craft_history_update_{table} BEFORE UPDATE ON {table}
WHEN OLD.STATUS NOT IN ('QUEUED', 'CLAIMED', 'RUNNING') AND NOT ({restamp})
BEGIN SELECT RAISE(ABORT, '{table} is append-only once an attempt ends: UPDATE of an ended attempt is refused, even from etl-craft'); END;
DROP TRIGGER IF EXISTS etl_craft_history_delete_{table};
CREATE TRIGGER etl_craft_history_delete_{table} BEFORE DELETE ON {table}
WHEN OLD.STATUS NOT IN ('QUEUED', 'CLAIMED', 'RUNNING')
 AND NOT EXISTS (SELECT 1 FROM AUD_ACTIONS WHERE ACTION_ID = etl_craft_purge() AND COMMAND = 'purge')
BEGIN SELECT RAISE(ABORT, '{table} is append-only once an attempt ends: DELETE of an ended attempt is refused, even from etl-craft'); END;

-- name: stamp_insert_template --
-- Stamp UPDATED_AT of a row inserted into {table}: the watermark etl-craft clone copies from.
DROP TRIGGER IF EXISTS etl_craft_watermark_insert_{table};
CREATE TRIGGER etl_craft_watermark_insert_{table} AFTER INSERT ON {table}
BEGIN UPDATE {table} SET UPDATED_AT = etl_craft_now() WHERE rowid = NEW.rowid; END;

-- name: stamp_update_template --
-- Stamp UPDATED_AT of a row of {table} that changed (the stamp itself is no change of its own).
DROP TRIGGER IF EXISTS etl_craft_watermark_update_{table};
CREATE TRIGGER etl_craft_watermark_update_{table} AFTER UPDATE ON {table}
WHEN NEW.UPDATED_AT IS OLD.UPDATED_AT
BEGIN UPDATE {table} SET UPDATED_AT = etl_craft_now() WHERE rowid = NEW.rowid; END;

-- name: metadata_template --
-- Stamp {table} rows with the actor and record each change in AUD_METADATA_CHANGES.
DROP TRIGGER IF EXISTS etl_craft_capture_insert_{table};
CREATE TRIGGER etl_craft_capture_insert_{table} AFTER INSERT ON {table}
BEGIN
    UPDATE {table} SET CREATED_BY = etl_craft_actor(), CREATE_DATE = etl_craft_now(),
        UPDATED_BY = etl_craft_actor(), UPDATE_DATE = etl_craft_now()
     WHERE rowid = NEW.rowid;
    INSERT INTO AUD_METADATA_CHANGES
        (CHANGED_AT, ACTOR, ACTOR_KIND, TABLE_NAME, ROW_KEY, OPERATION, BEFORE_JSON, AFTER_JSON, MIGRATION)
    SELECT etl_craft_now(), etl_craft_actor(), etl_craft_actor_kind(), '{table}', CAST(NEW.{key} AS TEXT),
           'INSERT', NULL, json_object({row_json}), etl_craft_migration()
      FROM {table} AS R WHERE R.rowid = NEW.rowid;
END;
-- Stamping rows just inserted has OLD.CREATED_BY NULL: that UPDATE is not a change of its own.
DROP TRIGGER IF EXISTS etl_craft_capture_update_{table};
CREATE TRIGGER etl_craft_capture_update_{table} AFTER UPDATE ON {table}
WHEN OLD.CREATED_BY IS NOT NULL
BEGIN
    UPDATE {table} SET CREATED_BY = OLD.CREATED_BY, CREATE_DATE = OLD.CREATE_DATE,
        UPDATED_BY = etl_craft_actor(), UPDATE_DATE = etl_craft_now()
     WHERE rowid = NEW.rowid;
    INSERT INTO AUD_METADATA_CHANGES
        (CHANGED_AT, ACTOR, ACTOR_KIND, TABLE_NAME, ROW_KEY, OPERATION, BEFORE_JSON, AFTER_JSON, MIGRATION)
    SELECT etl_craft_now(), etl_craft_actor(), etl_craft_actor_kind(), '{table}', CAST(NEW.{key} AS TEXT),
           'UPDATE', json_object({old_json}), json_object({row_json}), etl_craft_migration()
      FROM {table} AS R WHERE R.rowid = NEW.rowid;
END;
DROP TRIGGER IF EXISTS etl_craft_capture_delete_{table};
CREATE TRIGGER etl_craft_capture_delete_{table} AFTER DELETE ON {table}
BEGIN
    INSERT INTO AUD_METADATA_CHANGES
        (CHANGED_AT, ACTOR, ACTOR_KIND, TABLE_NAME, ROW_KEY, OPERATION, BEFORE_JSON, AFTER_JSON, MIGRATION)
    VALUES (etl_craft_now(), etl_craft_actor(), etl_craft_actor_kind(), '{table}', CAST(OLD.{key} AS TEXT),
            'DELETE', json_object({old_json}), NULL, etl_craft_migration());
END;
