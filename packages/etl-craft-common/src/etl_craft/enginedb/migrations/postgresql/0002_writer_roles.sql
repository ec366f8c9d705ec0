-- Writes authorized by role, not by the actor a session claims; TRUNCATE refused to every login.
-- The triggers that call these functions are attached by the migration runner.
COMMENT ON FUNCTION etl_craft_refuse_unmarked() IS 'Write guard: refuses INSERT, UPDATE and DELETE from a transaction etl-craft did not mark.';

CREATE FUNCTION etl_craft_refuse_unauthorized() RETURNS trigger LANGUAGE plpgsql
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
        USING ERRCODE = 'insufficient_privilege';
END $$;
COMMENT ON FUNCTION etl_craft_refuse_unauthorized() IS 'Write guard: only the tables'' owner and members of the writer role may write, whatever actor a session claims; search_path is pinned so no schema can shadow the catalog.';

CREATE FUNCTION etl_craft_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is written only by etl-craft: TRUNCATE is refused to every login, etl-craft included, since it would remove rows with no audit record; %',
        upper(TG_TABLE_NAME), TG_ARGV[0] USING ERRCODE = 'insufficient_privilege';
END $$;
COMMENT ON FUNCTION etl_craft_refuse_truncate() IS 'Write guard: TRUNCATE of an etl-craft table is refused, whoever asks.';
