-- answer_cache_member_left(): a member removed from a workspace (or who left it) keeps no cached
-- answer drawn from it. Such an answer could never be served again (the cache is keyed by the
-- owners the asker reads, sql/029_workspaces.sql), but its text is the workspace's. Its one body,
-- with its trigger (a repeatable file, sql/__init__.py).
-- SECURITY DEFINER: the removal may run as thotqen_app scoped to the workspace, while the cached
-- answers are the removed member's own rows.
create or replace function answer_cache_member_left() returns trigger language plpgsql
    security definer set search_path from current as $$
begin
    delete from answer_cache c where c.owner_id = old.user_id and c.spaces @> array[old.workspace_id];
    return null;
end $$;

-- Made once sql/029_workspaces.sql has made the table (a Supabase database may get this file's
-- generation first: sql/mirror.py; the next one makes the trigger).
do $$
begin
    if to_regclass('workspace_members') is not null then
        drop trigger if exists workspace_members_answer_cache on workspace_members;
        create trigger workspace_members_answer_cache after delete on workspace_members
            for each row execute function answer_cache_member_left();
    end if;
end $$;
