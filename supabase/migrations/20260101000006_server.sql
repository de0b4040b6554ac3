-- HTTP server: password accounts, login attempts (lockout and per-IP limits), refresh tokens,
-- chats and their messages, the query log (rate limits and metrics) and the semantic answer cache.

alter table users add column if not exists password_hash text;            -- argon2id; null for CLI/external users
alter table users add column if not exists external_id text;              -- e.g. 'supabase:<sub>'
create unique index if not exists users_external_id_idx on users (external_id) where external_id is not null;

-- Every login attempt, kept so a lockout survives restarts and holds across server processes.
create table if not exists login_attempts (
    id        bigserial primary key,
    username  text not null,
    ip        text not null,
    success   boolean not null,
    at        timestamptz not null default now()
);
create index if not exists login_attempts_username_idx on login_attempts (username, at desc);
create index if not exists login_attempts_ip_idx on login_attempts (ip, at desc);

-- Refresh tokens are single use: each refresh spends one and issues the next.
create table if not exists refresh_tokens (
    jti         uuid primary key,
    user_id     bigint not null references users(id) on delete cascade,
    expires_at  timestamptz not null,
    used_at     timestamptz,
    created_at  timestamptz not null default now()
);
create index if not exists refresh_tokens_user_idx on refresh_tokens (user_id);

create table if not exists chats (
    id            uuid primary key default gen_random_uuid(),
    owner_id      bigint not null references users(id) on delete cascade,
    title         text not null default '',
    document_ids  uuid[],                        -- null: all of the owner's documents
    created_at    timestamptz not null default now(),
    updated_at    timestamptz not null default now()
);
create index if not exists chats_owner_idx on chats (owner_id, updated_at desc);

create table if not exists messages (
    id          bigserial primary key,
    chat_id     uuid not null references chats(id) on delete cascade,
    owner_id    bigint not null references users(id) on delete cascade,
    role        text not null check (role in ('user', 'assistant')),
    content     text not null,
    status      text not null default 'ok' check (status in ('ok', 'blocked', 'error')),
    citations   jsonb not null default '[]'::jsonb,
    meta        jsonb not null default '{}'::jsonb,   -- cited, route, provider, cached, timings
    created_at  timestamptz not null default now()
);
create index if not exists messages_chat_idx on messages (chat_id, id);

-- One row per question (chat message or /rag run): the hourly limit counts these, metrics read them.
create table if not exists query_log (
    id             bigserial primary key,
    owner_id       bigint references users(id) on delete set null,
    source         text not null,                 -- chat | rag
    chat_id        uuid,
    status         text not null default 'running' check (status in ('running', 'ok', 'blocked', 'error')),
    cached         boolean not null default false,
    provider       text,
    latency_ms     double precision,
    input_tokens   integer not null default 0,
    output_tokens  integer not null default 0,
    error          text,
    created_at     timestamptz not null default now(),
    finished_at    timestamptz
);
create index if not exists query_log_owner_idx on query_log (owner_id, created_at desc);
create index if not exists query_log_created_idx on query_log (created_at);

-- Answers keyed by owner, scope (null = all documents) and the question's embedding.
create table if not exists answer_cache (
    id            bigserial primary key,
    owner_id      bigint not null references users(id) on delete cascade,
    document_ids  uuid[],                          -- sorted; null: all of the owner's documents
    question      text not null,
    embedding     vector(384) not null,
    answer        jsonb not null,
    hits          integer not null default 0,
    created_at    timestamptz not null default now(),
    last_hit_at   timestamptz
);
create index if not exists answer_cache_owner_idx on answer_cache (owner_id);

-- A document that appears, changes status or goes away invalidates the cached answers covering it:
-- a trigger, sql/functions/answer_cache_invalidate.sql.
