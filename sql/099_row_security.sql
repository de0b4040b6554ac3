-- Nothing of Thotqen's is readable through Supabase's public API (PostgREST as `anon` or
-- `authenticated`): the server is the only client of these tables, connecting as their owner.
--
-- 1. Row-level security on every table of this schema that this role owns, with no policies: a
--    role without BYPASSRLS that is not the owner sees no rows and can write none. The owner (the
--    app's connection) is unaffected (RLS is not forced on owners).
-- 2. Supabase grants `anon` and `authenticated` everything on new tables and functions in `public`
--    by default; those grants are revoked, and EXECUTE on the app's own functions (hybrid_search takes
--    an owner id as an argument: callable, it would read anyone's chunks) is revoked from PUBLIC.
-- Numbered 099 so a fresh `supabase db push` applies it after every other migration. Idempotent.
-- storage.db.migrate() runs this file again after any other migration it applies, so a
-- table or function added later is covered; with `supabase db push` a later migration that adds one
-- must lock it itself (tests/test_supabase.py checks the pushed schema).
do $$
declare
    obj record;
    api_roles text := (select string_agg(quote_ident(rolname), ', ') from pg_roles
                       where rolname in ('anon', 'authenticated'));
begin
    for obj in
        select c.oid::regclass as name, c.relrowsecurity as locked
        from pg_class c
        where c.relnamespace = current_schema()::regnamespace
          and c.relkind in ('r', 'p')
          and pg_has_role(c.relowner, 'USAGE')
          and not exists (select 1 from pg_depend d where d.objid = c.oid and d.deptype = 'e')
    loop
        if not obj.locked then
            execute format('alter table %s enable row level security', obj.name);
        end if;
        if api_roles is not null then
            execute format('revoke all on table %s from %s', obj.name, api_roles);
        end if;
    end loop;

    for obj in
        select p.oid::regprocedure as name
        from pg_proc p
        where p.pronamespace = current_schema()::regnamespace
          and pg_has_role(p.proowner, 'USAGE')
          and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
    loop
        execute format('revoke execute on function %s from public', obj.name);
        if api_roles is not null then
            execute format('revoke execute on function %s from %s', obj.name, api_roles);
        end if;
    end loop;

    if api_roles is not null then
        execute format('revoke all on all sequences in schema %I from %s', current_schema(), api_roles);
    end if;
end $$;
