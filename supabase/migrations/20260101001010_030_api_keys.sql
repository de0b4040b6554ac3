-- Issue 40. API keys for machines: MCP clients, OpenAI-compatible tools and scripts expect a static
-- key, not a 30-minute JWT. A key is a random secret shown once; only its SHA-256 is stored (a
-- high-entropy secret needs no slow hash: nothing to guess). `prefix` is its first characters, kept
-- so a person can tell keys apart. `scopes` are what it may do (read, ask, ingest: api/keys.py); a
-- revoked key's row is deleted, so the next request with it finds nothing. `last_used_at` is
-- written at most once a minute per key (storage/api_keys.py).
create table if not exists api_keys (
    id            uuid primary key default gen_random_uuid(),
    user_id       bigint not null references users(id) on delete cascade,
    name          text not null check (char_length(name) between 1 and 100),
    key_hash      text not null unique,
    prefix        text not null,
    scopes        text[] not null check (scopes <@ array['read', 'ask', 'ingest']::text[] and cardinality(scopes) > 0),
    created_at    timestamptz not null default now(),
    expires_at    timestamptz,
    last_used_at  timestamptz
);
create index if not exists api_keys_user_idx on api_keys (user_id, created_at);
alter table api_keys enable row level security;
do $$
declare
    api_roles text := (select string_agg(quote_ident(rolname), ', ') from pg_roles
                       where rolname in ('anon', 'authenticated'));
begin
    if api_roles is not null then
        execute format('revoke all on table api_keys from %s', api_roles);
    end if;
end $$;
