-- name: reserved_tables --
-- Every etl-craft table (AUD_, CFG_ and the migration ledger) in the Engine DB, with its first
-- primary-key column.
SELECT upper(c.relname) AS table_name,
       (SELECT upper(a.attname)
          FROM pg_index i
          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
         WHERE i.indrelid = c.oid AND i.indisprimary) AS key_column
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind = 'r'
   AND n.nspname = current_schema()
   AND (c.relname LIKE 'aud\_%' OR c.relname LIKE 'cfg\_%' OR c.relname = 'schema_migrations')
 ORDER BY c.relname;

-- name: guard_template --
-- Refuse writes to {table} by a login other than its owner and the members of {writer_role},
-- writes from a transaction etl-craft did not mark, and every TRUNCATE.
CREATE OR REPLACE TRIGGER etl_craft_guard BEFORE INSERT OR UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION etl_craft_refuse_unmarked('{remedy}');
CREATE OR REPLACE TRIGGER etl_craft_guard_truncate BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION etl_craft_refuse_truncate('{remedy}');
CREATE OR REPLACE TRIGGER etl_craft_guard_writer BEFORE INSERT OR UPDATE OR DELETE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION etl_craft_refuse_unauthorized('{writer_role}', '{remedy}');
ALTER TABLE {table} ENABLE TRIGGER etl_craft_guard;
ALTER TABLE {table} ENABLE TRIGGER etl_craft_guard_truncate;
ALTER TABLE {table} ENABLE TRIGGER etl_craft_guard_writer;

-- name: append_only_template --
-- Refuse UPDATE, DELETE and TRUNCATE of recorded history in {table}, even from etl-craft.
CREATE OR REPLACE TRIGGER etl_craft_history BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION etl_craft_refuse_change();
CREATE OR REPLACE TRIGGER etl_craft_history_truncate BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION etl_craft_refuse_change();

-- name: purgeable_template --
-- Refuse UPDATE, DELETE and TRUNCATE of recorded history in {table}, except a purge's DELETE.
CREATE OR REPLACE TRIGGER etl_craft_history BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION etl_craft_refuse_unpurged_change();
CREATE OR REPLACE TRIGGER etl_craft_history_truncate BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION etl_craft_refuse_change();

-- name: terminal_immutable_template --
-- Refuse UPDATE and DELETE of an attempt in {table} once it has ended, except a purge's DELETE.
CREATE OR REPLACE TRIGGER etl_craft_history BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION etl_craft_refuse_terminal_change();
CREATE OR REPLACE TRIGGER etl_craft_history_truncate BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION etl_craft_refuse_change();

-- name: stamp_insert_template --
-- Stamp UPDATED_AT of a row inserted into {table}: the watermark etl-craft clone copies from.
CREATE OR REPLACE TRIGGER etl_craft_watermark_insert BEFORE INSERT ON {table}
    FOR EACH ROW EXECUTE FUNCTION etl_craft_stamp_updated_at();

-- name: stamp_update_template --
-- Stamp UPDATED_AT of a row of {table} that changed.
CREATE OR REPLACE TRIGGER etl_craft_watermark_update BEFORE UPDATE ON {table}
    FOR EACH ROW EXECUTE FUNCTION etl_craft_stamp_updated_at();

-- name: metadata_template --
-- Stamp {table} rows with the actor and record each change in AUD_METADATA_CHANGES.
CREATE OR REPLACE TRIGGER etl_craft_stamp BEFORE INSERT OR UPDATE ON {table}
    FOR EACH ROW EXECUTE FUNCTION etl_craft_stamp_cfg();
CREATE OR REPLACE TRIGGER etl_craft_capture AFTER INSERT OR UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION etl_craft_capture_cfg('{key_lower}');

-- name: table_columns --
-- The columns of one table, in order.
SELECT upper(column_name) AS column_name
  FROM information_schema.columns
 WHERE table_schema = current_schema() AND table_name = lower(:table_name)
 ORDER BY ordinal_position;
