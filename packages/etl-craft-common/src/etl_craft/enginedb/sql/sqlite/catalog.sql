-- name: server_version --
-- The SQLite library's version, as doctor reports it.
SELECT sqlite_version() AS version;

-- name: guard_triggers --
-- Every etl-craft trigger on an AUD_ or CFG_ table or the ledger, so doctor can count them per table
-- (SQLite cannot disable a trigger).
SELECT upper(tbl_name) AS table_name, name AS trigger_name, 0 AS disabled
  FROM sqlite_master
 WHERE type = 'trigger'
   AND (upper(tbl_name) LIKE 'AUD\_%' ESCAPE '\' OR upper(tbl_name) LIKE 'CFG\_%' ESCAPE '\'
        OR upper(tbl_name) = 'SCHEMA_MIGRATIONS')
   AND name LIKE 'etl\_craft\_%' ESCAPE '\'
 ORDER BY tbl_name, name;

-- name: table_owner --
-- SQLite has no roles: no schema owner to grant from.
SELECT NULL AS schema_name, NULL AS owner WHERE 0;
