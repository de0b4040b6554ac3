-- answer_cache_invalidate(): a document that appears, changes status or goes away invalidates every
-- cached answer whose scope covers it: a trigger, so the CLI, the server and any other writer all keep
-- the cache honest. A workspace's document (its owner is the workspace) invalidates the answers of
-- every member whose cached scope read it (answer_cache.spaces). Its one body, with its trigger (a
-- repeatable file, sql/__init__.py).
-- SECURITY DEFINER: a document written under the role thotqen_app (storage/tenancy.py) sees only its
-- own space's rows, while the answers it invalidates are the members' (their owner_id is the person):
-- the trigger keeps that invariant for every tenant, so it runs as the tables' owner.
create or replace function answer_cache_invalidate() returns trigger language plpgsql
    security definer set search_path from current as $$
declare
    doc_owner bigint;
    doc_id uuid;
begin
    if tg_op = 'DELETE' then
        doc_owner := old.owner_id; doc_id := old.id;
    else
        doc_owner := new.owner_id; doc_id := new.id;
    end if;
    delete from answer_cache c
     where (c.owner_id = doc_owner or c.spaces @> array[doc_owner])
       and (c.document_ids is null or doc_id = any (c.document_ids));
    return null;
end $$;

drop trigger if exists documents_answer_cache on documents;
create trigger documents_answer_cache after insert or delete or update of status, content_hash on documents
    for each row execute function answer_cache_invalidate();
