-- member_spaces(): the owners whose documents p_user may use at role p_least or above, sorted: the
-- user's own id (their personal space: every role, it is theirs) and each workspace they are a member
-- of at that role or above; with p_workspace, that workspace only (empty when they are not a member
-- at that role). Every scoped query of the app reads its owners from here, at the moment of asking
-- (storage/workspaces.py), so a removed member reads nothing of the workspace from then on. Its one
-- body (a repeatable file, sql/__init__.py).
create or replace function member_spaces(p_user bigint, p_workspace bigint default null,
                                         p_least text default 'viewer')
returns bigint[]
language plpgsql stable  -- not sql: a body checked when made would need workspace_members there already
as $$
begin
return (select coalesce(array_agg(s.id order by s.id), '{}'::bigint[])
from (
    select u.id from users u
    where u.id = p_user and u.kind <> 'workspace' and p_workspace is null
    union
    select m.workspace_id from workspace_members m
    where m.user_id = p_user
      and (p_workspace is null or m.workspace_id = p_workspace)
      and array_position(array['viewer', 'editor', 'admin', 'owner'], m.role)
          >= array_position(array['viewer', 'editor', 'admin', 'owner'], p_least)
) s);
end $$;
