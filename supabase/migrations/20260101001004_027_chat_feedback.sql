-- The chat a person expects (issue 27): a verdict per answer, an answer stopped mid-way, and the
-- stop request that reaches the answering thread in whichever server process runs it.

-- 'stopped': the person stopped the answer; what was written until then is kept.
alter table messages drop constraint if exists messages_status_check;
alter table messages add constraint messages_status_check
    check (status in ('ok', 'blocked', 'error', 'stopped'));

-- Set by POST /api/chats/{id}/stop, cleared when a turn starts; the answering thread polls it
-- (answering/stopping.py), so a stop works with `serve --workers N` too.
alter table chats add column if not exists stop_requested_at timestamptz;

-- One verdict per assistant message, by its owner; changed in place when given again.
create table if not exists message_feedback (
    message_id  bigint primary key references messages(id) on delete cascade,
    owner_id    bigint not null references users(id) on delete cascade,
    rating      text not null check (rating in ('up', 'down')),
    note        text not null default '' check (length(note) <= 2000),
    created_at  timestamptz not null default now(),
    updated_at  timestamptz not null default now()
);
create index if not exists message_feedback_updated_idx on message_feedback (updated_at);
alter table message_feedback enable row level security;
do $$
declare
    api_roles text := (select string_agg(quote_ident(rolname), ', ') from pg_roles
                       where rolname in ('anon', 'authenticated'));
begin
    if api_roles is not null then
        execute format('revoke all on table message_feedback from %s', api_roles);
    end if;
end $$;
