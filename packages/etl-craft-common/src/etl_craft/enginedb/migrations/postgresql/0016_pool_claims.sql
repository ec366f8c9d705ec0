-- A worker login bound to pools may claim only their attempts: the database refuses the claim,
-- whatever the worker's own code asks. A login is bound to pool P by membership of the role
-- etl_craft_pool_<p> (etl-craft setup --print-grants --worker-login LOGIN=P); a login of no such
-- role, the tables' owner and superusers claim from any pool.
CREATE FUNCTION etl_craft_refuse_foreign_claim() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    pools text[];
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RETURN NEW;
    END IF;
    SELECT array_agg(substr(r.rolname, 16) ORDER BY r.rolname) INTO pools
      FROM pg_roles r
     WHERE r.rolname LIKE 'etl\_craft\_pool\_%' AND pg_has_role(current_user, r.oid, 'MEMBER');
    IF pools IS NOT NULL AND NOT (lower(NEW.POOL) = ANY (pools)) THEN
        RAISE EXCEPTION 'login % may claim attempts of pool % only: attempt % is in pool %, which the database refuses it',
            current_user, array_to_string(pools, ', '), NEW.ATTEMPT_ID, NEW.POOL
            USING ERRCODE = '42501',
                  HINT = 'run the worker with --pool set to its login''s pool, or grant the login etl_craft_pool_' || lower(NEW.POOL);
    END IF;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION etl_craft_refuse_foreign_claim() IS 'Refuses a claim by a login bound to other pools (membership of etl_craft_pool_<pool> roles).';
CREATE TRIGGER etl_craft_pool_claim BEFORE UPDATE ON AUD_TASK_ATTEMPTS
    FOR EACH ROW WHEN (OLD.STATUS = 'QUEUED' AND NEW.STATUS = 'CLAIMED')
    EXECUTE FUNCTION etl_craft_refuse_foreign_claim();
