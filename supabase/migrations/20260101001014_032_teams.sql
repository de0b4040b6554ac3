-- Issue 43, the rest of teams: a chat over one workspace, the workspace audit log and one-time
-- invitation links.
--
-- A chat may be over one workspace (`workspace_id`): each question in it reads that workspace only,
-- as the asker may read it then (member_spaces() with the workspace), so a member removed later
-- asks it over nothing. Deleting the workspace deletes such chats, as docs/teams.md promises.
alter table chats add column if not exists workspace_id bigint references workspaces(id) on delete cascade;

-- The audit log of a workspace: who changed its membership (added, changed a role, removed, left)
-- and who deleted what in it (a document, a collection, the workspace itself). A row is written in
-- the same transaction as the change (storage/audit.py), so a change is never without its record.
-- `workspace_id` has no foreign key on purpose: the record of a workspace's deletion outlives it
-- (for the operator; the API shows a workspace's log only while it exists). Names are copied, not
-- referenced, so the record still says who when a user is gone.
create table if not exists workspace_audit (
    id            bigint generated always as identity primary key,
    workspace_id  bigint not null,
    actor_id      bigint references users(id) on delete set null,
    actor         text not null,
    action        text not null check (action in ('workspace_created', 'member_added', 'role_changed',
                                                  'member_removed', 'member_left', 'document_deleted',
                                                  'collection_deleted', 'workspace_deleted',
                                                  'invite_created', 'invite_accepted', 'invite_revoked')),
    subject       text,
    detail        jsonb not null default '{}'::jsonb,
    at            timestamptz not null default now()
);
create index if not exists workspace_audit_workspace_idx on workspace_audit (workspace_id, id desc);

-- A one-time invitation link: whoever opens it while signed in, before it expires, joins at its
-- role, once. Only the token's sha256 is stored (the link is shown once, like an API key); `used_by`
-- set means spent. Revoking one deletes its row.
create table if not exists workspace_invites (
    id            bigint generated always as identity primary key,
    workspace_id  bigint not null references workspaces(id) on delete cascade,
    token_hash    text not null unique,
    role          text not null check (role in ('owner', 'admin', 'editor', 'viewer')),
    created_by    bigint references users(id) on delete set null,
    created_at    timestamptz not null default now(),
    expires_at    timestamptz not null,
    used_by       bigint references users(id) on delete set null,
    used_at       timestamptz
);
create index if not exists workspace_invites_workspace_idx on workspace_invites (workspace_id, created_at);

alter table workspace_audit enable row level security;
alter table workspace_invites enable row level security;
do $$
declare
    api_roles text := (select string_agg(quote_ident(rolname), ', ') from pg_roles
                       where rolname in ('anon', 'authenticated'));
begin
    if api_roles is not null then
        execute format('revoke all on table workspace_audit, workspace_invites from %s', api_roles);
    end if;
end $$;
