-- api_keys_member_left(): a member removed from a workspace (or who left it) loses their API keys
-- bound to it, at once: such a key would read nothing of the workspace any more (its requests check
-- the membership), and it must not come back to life if they are added again. Its one body, with its
-- trigger (a repeatable file, sql/__init__.py).
-- SECURITY DEFINER: the removal runs as thotqen_app scoped to the workspace (storage/tenancy.py),
-- which has no grant on api_keys.
create or replace function api_keys_member_left() returns trigger language plpgsql
    security definer set search_path from current as $$
begin
    delete from api_keys k where k.user_id = old.user_id and k.workspace_id = old.workspace_id;
    return null;
end $$;

-- Made once the tables are there (a Supabase database may get this file's generation first:
-- sql/mirror.py; the next one makes the trigger).
do $$
begin
    if to_regclass('workspace_members') is not null and exists (
        select 1 from pg_attribute where attrelid = to_regclass('api_keys') and attname = 'workspace_id') then
        drop trigger if exists workspace_members_api_keys on workspace_members;
        create trigger workspace_members_api_keys after delete on workspace_members
            for each row execute function api_keys_member_left();
    end if;
end $$;
