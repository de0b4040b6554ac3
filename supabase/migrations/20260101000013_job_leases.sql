-- Job leases instead of session advisory locks, so jobs work through a transaction pooler
-- (Supabase's port 6543 hands each transaction to any backend: a session lock would be lost).
--
-- A worker claims a job by setting `claim` (a fresh uuid) and `lease_until`; a heartbeat pushes
-- `lease_until` forward while it works. A job still 'processing' after its lease ran out belongs to
-- a worker that died: the next claim takes it over (attempts + 1) or fails it after JOB_MAX_ATTEMPTS.
-- Every write of a running job names its claim, so a worker that lost its lease writes nothing.
alter table document_jobs add column if not exists claim uuid;
alter table document_jobs add column if not exists lease_until timestamptz;
alter table document_jobs add column if not exists worker text;          -- host:pid of the claimant, for operators
alter table document_jobs add column if not exists published_at timestamptz;  -- last handed to the broker
create index if not exists document_jobs_lease_idx on document_jobs (lease_until) where status = 'processing';

-- Retention deletes by age (storage/retention.py).
create index if not exists login_attempts_at_idx on login_attempts (at);
create index if not exists refresh_tokens_expires_idx on refresh_tokens (expires_at);
