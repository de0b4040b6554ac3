-- Issue 26. Which surface made each user: `cli` (a name the operator passes to `--user`: no password,
-- never signed into), `web` (signup with a password) or `external` (a Supabase identity). The CLI
-- refuses to act as a web or external account unless told to (`--web-account`), so a name taken on
-- the web never reads what the operator ingests from the command line, and a CLI user's name is
-- never free for signup. Existing installs: a user with neither a password nor an external identity
-- was made by the CLI.
alter table users add column if not exists kind text;
update users set kind = case when external_id is not null then 'external'
                             when password_hash is not null then 'web' else 'cli' end
 where kind is null;
alter table users alter column kind set default 'cli';
alter table users alter column kind set not null;
alter table users drop constraint if exists users_kind_check;
alter table users add constraint users_kind_check check (kind in ('cli', 'web', 'external'));

-- The server process that admitted a question (answering/accounting.py): it holds a session advisory
-- lock named after this id while it lives, so a start-up sweep ends only the running rows of
-- processes that are gone (a crash, kill -9), never those of a live neighbour (`serve --workers N`).
-- Null: a process that holds no such lock (behind a transaction pooler, the CLI's MCP server).
alter table query_log add column if not exists instance uuid;

-- Fair job order (storage/jobs.py next_claimable) looks up each owner's running and served jobs.
create index if not exists document_jobs_owner_idx on document_jobs (owner_id, status, updated_at);
