-- Issue 43. Workspaces: documents and collections shared by a team, with roles.
--
-- A workspace owns what it holds the way a user owns theirs: it has a row in `users` (kind
-- 'workspace', a name nobody signs in or passes to --user with, never a password or an external
-- identity), and that row's id is the `owner_id` of its documents, chunks, jobs and collections. So
-- every owner-scoped index, the per-owner dedupe and the cascades hold unchanged, and deleting the
-- workspace's row deletes everything in it. A user's personal space is their own id.
--
-- Who may read or write which owners' rows is `member_spaces()` (sql/functions/member_spaces.sql):
-- the user's own id and the workspaces they are a member of, at a least role. The app's queries
-- scope by `owner_id = any(...)` of that list, read at the moment of each request.
alter table users drop constraint if exists users_kind_check;
alter table users add constraint users_kind_check check (kind in ('cli', 'web', 'external', 'workspace'));

create table if not exists workspaces (
    id          bigint primary key references users(id) on delete cascade,
    name        text not null check (length(name) between 1 and 100 and name = btrim(name)),
    created_by  bigint references users(id) on delete set null,
    created_at  timestamptz not null default now()
);

-- Roles, lowest first: viewer (search, ask, open cited pages), editor (also upload, re-index, delete
-- documents, manage collections), admin (also manage members up to admin), owner (also owners and
-- deleting the workspace). storage/workspaces.py enforces who may change what; a workspace never
-- loses its last owner.
create table if not exists workspace_members (
    workspace_id  bigint not null references workspaces(id) on delete cascade,
    user_id       bigint not null references users(id) on delete cascade,
    role          text not null check (role in ('owner', 'admin', 'editor', 'viewer')),
    added_by      bigint references users(id) on delete set null,
    added_at      timestamptz not null default now(),
    primary key (workspace_id, user_id)
);
create index if not exists workspace_members_user_idx on workspace_members (user_id, workspace_id);

-- Who uploaded a document (in a workspace, a member; in a personal space, its owner). Null for
-- documents from before: their owner uploaded them.
alter table documents add column if not exists uploaded_by bigint references users(id) on delete set null;

-- The semantic answer cache is also keyed by the owners the asker could read when the answer was
-- made (sorted): a member whose access changed, or another member, never gets an answer drawn from
-- documents they cannot read. Rows from before have none and are never served again.
alter table answer_cache add column if not exists spaces bigint[];
create index if not exists answer_cache_spaces_idx on answer_cache using gin (spaces);

alter table workspaces enable row level security;
alter table workspace_members enable row level security;
do $$
declare
    api_roles text := (select string_agg(quote_ident(rolname), ', ') from pg_roles
                       where rolname in ('anon', 'authenticated'));
begin
    if api_roles is not null then
        execute format('revoke all on table workspaces, workspace_members from %s', api_roles);
    end if;
end $$;
