-- Protection (issue 17): a question the client walked away from ends 'cancelled' instead of
-- 'running' forever, and a per-user token version lets the server revoke access tokens it issued.

alter table query_log drop constraint if exists query_log_status_check;
alter table query_log add constraint query_log_status_check
    check (status in ('running', 'ok', 'blocked', 'error', 'cancelled'));
create index if not exists query_log_running_idx on query_log (created_at) where status = 'running';

-- Every access token carries the version current when it was issued; bumping it (a refresh token
-- presented twice means it leaked) makes every earlier access token of the user answer 401.
alter table users add column if not exists token_version integer not null default 0;
