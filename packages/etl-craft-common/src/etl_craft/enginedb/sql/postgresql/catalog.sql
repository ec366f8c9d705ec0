-- name: server_version --
-- The PostgreSQL server's version, as doctor reports it.
SELECT current_setting('server_version') AS version;

-- name: guard_triggers --
-- Every etl-craft trigger on an AUD_ or CFG_ table or the ledger, so doctor can count them per table,
-- and whether ALTER TABLE ... DISABLE TRIGGER switched it off.
SELECT upper(c.relname) AS table_name, t.tgname AS trigger_name, t.tgenabled = 'D' AS disabled
  FROM pg_trigger t
  JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE NOT t.tgisinternal
   AND n.nspname = current_schema()
   AND (c.relname LIKE 'aud\_%' OR c.relname LIKE 'cfg\_%' OR c.relname = 'schema_migrations')
   AND t.tgname LIKE 'etl\_craft\_%'
 ORDER BY c.relname, t.tgname;

-- name: foreign_write_grants --
-- Write privileges on any table or sequence of etl-craft's schema (INSERT, UPDATE, DELETE,
-- TRUNCATE on a table; USAGE for nextval and UPDATE for setval on a sequence) granted to a role
-- other than the owner, the writer role and the current user. A sequence is named as such.
SELECT CASE WHEN c.relkind = 'S' THEN 'SEQUENCE ' ELSE '' END || upper(c.relname) AS table_name,
       coalesce(r.rolname, 'PUBLIC') AS grantee,
       a.privilege_type AS privilege
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
 CROSS JOIN LATERAL aclexplode(c.relacl) a
  LEFT JOIN pg_roles r ON r.oid = a.grantee
 WHERE n.nspname = current_schema()
   AND ((c.relkind IN ('r', 'p') AND a.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'))
        OR (c.relkind = 'S' AND a.privilege_type IN ('USAGE', 'UPDATE')))
   AND a.grantee <> c.relowner
   AND (r.rolname IS NULL OR r.rolname NOT IN (current_user, :writer_role))
 ORDER BY c.relname, grantee, a.privilege_type;

-- name: foreign_write_logins --
-- Logins that may write any table or sequence of etl-craft's schema through any grant (their
-- own, a role they are a member of, PUBLIC) yet are neither superusers, the owner's members
-- nor the writer role's.
SELECT CASE WHEN c.relkind = 'S' THEN 'SEQUENCE ' ELSE '' END || upper(c.relname) AS table_name,
       r.rolname AS grantee, p.privilege
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN (VALUES ('r', 'INSERT'), ('r', 'UPDATE'), ('r', 'DELETE'), ('r', 'TRUNCATE'),
               ('p', 'INSERT'), ('p', 'UPDATE'), ('p', 'DELETE'), ('p', 'TRUNCATE'),
               ('S', 'USAGE'), ('S', 'UPDATE')) AS p (relkind, privilege)
    ON p.relkind = CAST(c.relkind AS TEXT)
 CROSS JOIN pg_roles r
 WHERE n.nspname = current_schema()
   AND r.rolcanlogin
   AND NOT r.rolsuper
   AND NOT pg_has_role(r.oid, c.relowner, 'MEMBER')
   AND NOT coalesce(pg_has_role(r.oid, to_regrole(:writer_role), 'MEMBER'), false)
   AND CASE WHEN c.relkind = 'S' THEN has_sequence_privilege(r.oid, c.oid, p.privilege)
            ELSE has_table_privilege(r.oid, c.oid, p.privilege) END
 ORDER BY c.relname, r.rolname, p.privilege;

-- name: connection_budget --
-- The server's connection limit, the connections it keeps for superusers (and, from
-- PostgreSQL 16, for pg_use_reserved_connections), and how many connections are open now.
SELECT CAST(current_setting('max_connections') AS integer) AS max_connections,
       CAST(current_setting('superuser_reserved_connections') AS integer)
         + COALESCE(CAST(current_setting('reserved_connections', true) AS integer), 0)
         AS reserved_connections,
       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') AS connections;

-- name: connection_demand --
-- What etl-craft's processes need from the server: leading overseers and running task processes.
SELECT (SELECT count(*) FROM AUD_OVERSEERS WHERE STOPPED_AT IS NULL
          AND HEARTBEAT_AT > now() - interval '5 minutes') AS overseers,
       (SELECT count(*) FROM AUD_TASK_ATTEMPTS WHERE STATUS IN ('CLAIMED', 'RUNNING')) AS tasks;

-- name: connection_demand_workers --
-- The live workers of every pool with their slots of every kind together, oldest first.
SELECT WORKER_ID AS worker_id, INGESTION_SLOTS + WAREHOUSE_SLOTS AS slots
  FROM AUD_WORKERS
 WHERE STATUS <> 'GONE'
 ORDER BY STARTED_AT, WORKER_ID;

-- name: table_owner --
-- The schema etl-craft's tables live in and the role that owns them, for printed GRANTs.
SELECT current_schema() AS schema_name, pg_get_userbyid(c.relowner) AS owner
  FROM pg_class c
 WHERE c.oid = to_regclass('aud_actions');
