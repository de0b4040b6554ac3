-- tenant_cell_matches(): the full-text matches of the table-cell search (storage/tables.py) among
-- the rows of the owners in the transaction's setting `thotqen.owners`, by their GIN index: why a
-- function, see tenant_message_matches.sql (a `@@` match cannot use its index under row security).
-- SECURITY DEFINER, the policy's own rule applied inside, ids only out. Its one body (a repeatable
-- file, sql/__init__.py).
create or replace function tenant_cell_matches(p_query tsquery)
returns table (id bigint)
language plpgsql stable security definer set search_path from current
as $$
begin
    return query
    select c.id from table_cells c
    where c.owner_id = any(coalesce(nullif(current_setting('thotqen.owners', true), '')::bigint[], '{}'::bigint[]))
      and c.tsv @@ p_query;
end $$;
