-- Every write guard raises its own SQLSTATE, 42W01 (class 42, access rule violation, with a
-- subclass in the range the SQL standard leaves to implementations), so that etl-craft tells a
-- guard's refusal from any other error by its code rather than by its wording; a plain client
-- still reads it as a refused access. Bodies are otherwise unchanged.
CREATE OR REPLACE FUNCTION etl_craft_refuse_unmarked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF etl_craft_actor() IS NULL THEN
        RAISE EXCEPTION '% is written only by etl-craft; %', upper(TG_TABLE_NAME), TG_ARGV[0]
            USING ERRCODE = '42W01';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION etl_craft_refuse_unauthorized() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    writer_role text := TG_ARGV[0];
    table_owner oid := (SELECT relowner FROM pg_class WHERE oid = TG_RELID);
BEGIN
    IF pg_has_role(current_user, table_owner, 'MEMBER')
       OR coalesce(pg_has_role(current_user, to_regrole(quote_ident(writer_role)), 'MEMBER'), false) THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION '% is written only by etl-craft: login % is neither its owner % nor a member of the writer role %, whatever its session settings say; %',
        upper(TG_TABLE_NAME), current_user, pg_get_userbyid(table_owner), writer_role, TG_ARGV[1]
        USING ERRCODE = '42W01';
END $$;

CREATE OR REPLACE FUNCTION etl_craft_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is written only by etl-craft: TRUNCATE is refused to every login, etl-craft included, since it would remove rows with no audit record; %',
        upper(TG_TABLE_NAME), TG_ARGV[0] USING ERRCODE = '42W01';
END $$;

CREATE OR REPLACE FUNCTION etl_craft_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % of a recorded row is refused, even from etl-craft',
        upper(TG_TABLE_NAME), TG_OP USING ERRCODE = '42W01';
END $$;

CREATE OR REPLACE FUNCTION etl_craft_refuse_terminal_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.STATUS NOT IN ('QUEUED', 'CLAIMED', 'RUNNING') THEN
        RAISE EXCEPTION '% is append-only once an attempt ends: % of attempt % (%) is refused, even from etl-craft',
            upper(TG_TABLE_NAME), TG_OP, OLD.ATTEMPT_ID, OLD.STATUS USING ERRCODE = '42W01';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END $$;
