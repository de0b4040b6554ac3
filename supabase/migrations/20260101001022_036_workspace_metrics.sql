-- Issue 43, admin metrics per workspace: the workspace a question was asked in (a chat over it,
-- or an API key bound to it on /rag, /v1 or MCP), so its questions can be counted. Null: a
-- question over the asker's own space and every workspace at once, which belongs to none of them.
-- No foreign key, like workspace_audit: the query log outlives a deleted workspace (for the
-- operator's totals), and counting by it never reads a deleted workspace's name.
alter table query_log add column if not exists workspace_id bigint;
create index if not exists query_log_workspace_idx on query_log (workspace_id, created_at)
    where workspace_id is not null;
