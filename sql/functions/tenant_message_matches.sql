-- tenant_message_matches(): the full-text matches of the finder (chats' messages), among the rows
-- of the owners in the transaction's setting `thotqen.owners` (storage/tenancy.py), by its GIN
-- index. tenant_cell_matches.sql does the same for the table-cell search.
--
-- Why functions: under row-level security Postgres will not use an index for a `@@` match (the
-- operator is not leakproof, so it may not run before the policy): the query, run as thotqen_app,
-- would read every message or cell of the tenant. These run as their owner (SECURITY DEFINER), so
-- the index is used, and apply the policy's own rule themselves: the same setting, no owner argument
-- a caller could get wrong. They return ids only; the caller reads the rows by id, under the
-- policies again. EXECUTE is thotqen_app's and the owner's (sql/099_row_security.sql revokes PUBLIC).
-- Its one body (a repeatable file, sql/__init__.py).
create or replace function tenant_message_matches(p_query tsquery, p_limit integer)
returns table (id bigint)
language plpgsql stable security definer set search_path from current
as $$
begin
    return query
    select m.id from messages m
    where m.owner_id = any(coalesce(nullif(current_setting('thotqen.owners', true), '')::bigint[], '{}'::bigint[]))
      and m.search_tsv @@ p_query
    order by m.id desc limit p_limit;
end $$;
