-- Issue 43, continued: the rest of the app's requests run under the role thotqen_app too
-- (storage/tenancy.py), and a chat can be shared read-only with its workspace.
--
-- 1. A chat shared with its workspace: `shared_at` set on a chat over a workspace (chats.workspace_id).
--    Its rows and its messages are readable, never writable, by a transaction whose owners include
--    that workspace (its members, read at each request: a removed member loses it at once). Only a
--    chat over a workspace may be shared: its answers cite that workspace's documents and nothing of
--    the asker's own.
-- 2. The workspace audit log is written by deletions under the app role (a workspace's document or
--    collection deleted by a member): thotqen_app may add and read entries of the transaction's
--    owners' workspaces only, never change or delete one.
-- 3. Membership changes run scoped to their workspace: thotqen_app reads and changes the members of
--    the transaction's owners' workspaces only, and may lock (FOR UPDATE) and read those workspaces'
--    rows (never insert or delete one: making and deleting a workspace, a row of `users`, stay the
--    login's). So do its invitation links, but for opening one: a token names its workspace, which
--    its reader is not a member of yet, so that lookup is the login's (storage/invites.py).
-- 4. An API key bound to one workspace (api_keys.workspace_id): its requests read and write that
--    workspace only (api/access.py); deleting the workspace deletes its keys, and removing a member
--    (or their leaving) deletes their keys bound to it (sql/functions/api_keys_member_left.sql).
-- The full-text matches of the finder and the table-cell search, and the answer cache's
-- invalidation triggers, are functions (sql/functions/tenant_message_matches.sql,
-- tenant_cell_matches.sql, answer_cache_invalidate.sql, answer_cache_member_left.sql). Idempotent.
alter table chats add column if not exists shared_at timestamptz;
alter table api_keys add column if not exists workspace_id bigint references workspaces(id) on delete cascade;
do $$
begin
    if not exists (select 1 from pg_constraint where conname = 'chats_shared_over_workspace') then
        alter table chats add constraint chats_shared_over_workspace
            check (shared_at is null or workspace_id is not null);
    end if;
end $$;
create index if not exists chats_shared_idx on chats (workspace_id, updated_at desc) where shared_at is not null;

do $$
declare
    owners constant text := $q$coalesce(nullif(current_setting('thotqen.owners', true), '')::bigint[], '{}'::bigint[])$q$;
begin
    -- permissive policies add to tenant_rows (sql/033_tenant_policies.sql): read only (for select)
    drop policy if exists shared_chats on chats;
    execute format('create policy shared_chats on chats for select using (shared_at is not null and workspace_id = any(%s))', owners);
    drop policy if exists shared_chats on messages;
    -- the chat's row is itself read under its policies: visible only when shared with these owners
    -- (or the reader's own, which tenant_rows admits already)
    execute format('create policy shared_chats on messages for select using (exists (select 1 from chats c'
                   ' where c.id = messages.chat_id and c.shared_at is not null and c.workspace_id = any(%s)))', owners);

    alter table workspace_audit enable row level security;
    drop policy if exists tenant_rows on workspace_audit;
    execute format('create policy tenant_rows on workspace_audit for select using (workspace_id = any(%s))', owners);
    drop policy if exists tenant_rows_insert on workspace_audit;
    execute format('create policy tenant_rows_insert on workspace_audit for insert with check (workspace_id = any(%s))', owners);
    alter table workspace_members enable row level security;
    drop policy if exists tenant_rows on workspace_members;
    execute format('create policy tenant_rows on workspace_members using (workspace_id = any(%s))'
                   ' with check (workspace_id = any(%s))', owners, owners);
    alter table workspace_invites enable row level security;
    drop policy if exists tenant_rows on workspace_invites;
    execute format('create policy tenant_rows on workspace_invites using (workspace_id = any(%s))'
                   ' with check (workspace_id = any(%s))', owners, owners);
    drop policy if exists tenant_rows_lock on workspaces;
    execute format('create policy tenant_rows_lock on workspaces for update using (id = any(%s))'
                   ' with check (id = any(%s))', owners, owners);
    if exists (select 1 from pg_roles where rolname = 'thotqen_app') then
        grant select, insert, update, delete on workspace_members, workspace_invites to thotqen_app;
        grant update on workspaces to thotqen_app;
        grant select, insert on workspace_audit to thotqen_app;
        execute format('grant usage on all sequences in schema %I to thotqen_app', current_schema());
    end if;
end $$;
