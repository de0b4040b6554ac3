-- Issue 41. A web session that signed out (api/session.py DELETE /api/session): its access token is a
-- JWT that stays valid until it expires, so signing out only cleared the cookie and spent the refresh
-- token, and a copy of the cookie kept working. Signing out now names the session here, and every
-- check of a token bound to it (the hash of its CSRF token, which the session's access and refresh
-- tokens both carry: api/security.py) answers 401, and none of its refresh tokens refreshes. A row is
-- needed only while a token of the session could still be valid (REFRESH_TOKEN_DAYS): upkeep deletes
-- it after `expires_at`.
create table if not exists ended_sessions (
    user_id     bigint not null references users(id) on delete cascade,
    session     text not null,
    expires_at  timestamptz not null,
    primary key (user_id, session)
);
create index if not exists ended_sessions_expires_idx on ended_sessions (expires_at);
alter table ended_sessions enable row level security;
do $$
declare
    api_roles text := (select string_agg(quote_ident(rolname), ', ') from pg_roles
                       where rolname in ('anon', 'authenticated'));
begin
    if api_roles is not null then
        execute format('revoke all on table ended_sessions from %s', api_roles);
    end if;
end $$;
