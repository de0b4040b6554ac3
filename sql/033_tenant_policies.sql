-- Issue 43: tenancy enforced twice. Every query of the app scopes by `owner_id = any(<owners>)`; this
-- migration adds the second line: row-level-security policies that admit only the rows of the owners
-- named in the transaction's setting `thotqen.owners` (a bigint[] as text, set with
-- `set_config(..., true)`, i.e. SET LOCAL, which a transaction pooler keeps), and a role the app
-- switches to for a request's reads, `thotqen_app` (NOLOGIN, NOBYPASSRLS, not the tables' owner, so
-- the policies bind it). storage/tenancy.py does both in one statement inside the request's
-- transaction; a query that forgot its WHERE then still reads nothing of another tenant, and with
-- no setting at all nothing.
--
-- The tables' owner (the migrator, background jobs acting for the system) is unaffected: RLS is not
-- forced on owners. The policies are for PUBLIC, so Supabase's `anon` and `authenticated` would be
-- bound by them too, but they hold no grants on these tables (sql/099_row_security.sql): they still
-- read nothing. Idempotent (run again, it replaces its policies).
--
-- Grants. thotqen_app gets the tenant tables (select, insert, update, delete, rows bound by the
-- policies), the global reference tables search reads (select), the columns of `users` a document
-- listing shows (id, username, kind: never a password hash), the sequences, and EXECUTE on the
-- schema's functions; default privileges grant it EXECUTE on functions created later (a changed
-- hybrid_search is dropped and created anew). A table added later is not granted: under the app
-- role a query on it fails loudly until its migration grants it and gives it a policy.
--
-- Roles are per cluster: where the migrating role may not create roles (a managed Postgres without
-- CREATEROLE) the role part is skipped with a warning, the policies still apply to PUBLIC, and the
-- app reads as the owner (storage/tenancy.py logs that once); docs/teams.md says how to add it.
do $$
declare
    owners constant text := $q$owner_id = any(coalesce(nullif(current_setting('thotqen.owners', true), '')::bigint[], '{}'::bigint[]))$q$;
    obj record;
    has_role boolean;
begin
    -- 1. the policies (before the role: they do not depend on it)
    for obj in
        select c.oid::regclass as name
        from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attname = 'owner_id' and not a.attisdropped
        where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
          and pg_has_role(c.relowner, 'USAGE')
    loop
        execute format('alter table %s enable row level security', obj.name);
        execute format('drop policy if exists tenant_rows on %s', obj.name);
        execute format('create policy tenant_rows on %s using (%s) with check (%s)', obj.name, owners, owners);
    end loop;
    -- a collection's members: those of a collection the transaction may see (that check is itself
    -- bound by the policy on collections)
    drop policy if exists tenant_rows on collection_documents;
    create policy tenant_rows on collection_documents
        using (exists (select 1 from collections c where c.id = collection_id))
        with check (exists (select 1 from collections c where c.id = collection_id));
    -- a workspace's own row (its name, shown beside its documents): the owners named only
    drop policy if exists tenant_rows on workspaces;
    create policy tenant_rows on workspaces for select
        using (id = any(coalesce(nullif(current_setting('thotqen.owners', true), '')::bigint[], '{}'::bigint[])));
    -- who uploaded a document is shown by name: usernames are readable (three columns only, below)
    drop policy if exists tenant_rows on users;
    create policy tenant_rows on users for select using (true);
    -- global reference data search reads: the same for every tenant
    drop policy if exists tenant_rows on query_glossary;
    create policy tenant_rows on query_glossary for select using (true);
    drop policy if exists tenant_rows on query_stopwords;
    create policy tenant_rows on query_stopwords for select using (true);
    drop policy if exists tenant_rows on embedding_index;
    create policy tenant_rows on embedding_index for select using (true);

    -- 2. the role the app reads as
    has_role := exists (select 1 from pg_roles where rolname = 'thotqen_app');
    if not has_role then
        begin
            create role thotqen_app nologin nobypassrls;
            has_role := true;
        exception
            when duplicate_object or unique_violation then has_role := true;  -- another database's migrator
            when insufficient_privilege then
                raise warning 'thotqen: cannot create role thotqen_app (needs CREATEROLE); row-level security '
                              'is not enforced on the app''s reads until an administrator creates it '
                              '(docs/teams.md)';
        end;
    end if;
    if not has_role then
        return;
    end if;
    -- the migrating role (the app's login) may switch to it; a superuser already may
    if not (select rolsuper from pg_roles where rolname = current_user) then
        begin
            if current_setting('server_version_num')::int >= 160000 then
                execute format('grant thotqen_app to %I with set true, inherit false', current_user);
            else
                execute format('grant thotqen_app to %I', current_user);
            end if;
        exception when insufficient_privilege or invalid_grant_operation then
            raise warning 'thotqen: cannot grant role thotqen_app to %; the app reads as the owner', current_user;
        end;
    end if;

    execute format('grant usage on schema %I to thotqen_app', current_schema());
    for obj in
        select c.oid::regclass as name
        from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attname = 'owner_id' and not a.attisdropped
        where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
          and pg_has_role(c.relowner, 'USAGE')
    loop
        execute format('grant select, insert, update, delete on %s to thotqen_app', obj.name);
    end loop;
    grant select, insert, update, delete on collection_documents to thotqen_app;
    grant select on workspaces, query_glossary, query_stopwords, embedding_index to thotqen_app;
    grant select (id, username, kind) on users to thotqen_app;
    execute format('grant usage on all sequences in schema %I to thotqen_app', current_schema());
    for obj in
        select p.oid::regprocedure as name from pg_proc p
        where p.pronamespace = current_schema()::regnamespace and pg_has_role(p.proowner, 'USAGE')
          and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
    loop
        execute format('grant execute on function %s to thotqen_app', obj.name);
    end loop;
    execute format('alter default privileges in schema %I grant execute on functions to thotqen_app', current_schema());
    execute format('alter default privileges in schema %I grant usage on sequences to thotqen_app', current_schema());
end $$;
