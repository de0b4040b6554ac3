-- refresh_term_postings(): a filing's sparse postings (term_stats, sql/011_term_postings.sql) and its
-- distinct headings (heading_postings, sql/020_heading_postings.sql), rebuilt from its chunks'
-- tsvectors when they are written (storage/documents.py). Replaces the filing's rows; the caller's
-- transaction makes it atomic. Its one body: change it here (a repeatable file, sql/__init__.py).
--
-- The one place the postings' weight is defined: BM25 tf saturation (k1 = 1.2), doubled when the
-- word is in the heading (weight A).
create or replace function refresh_term_postings(p_document_id uuid) returns void language sql as $$
    delete from term_stats where document_id = p_document_id;
    insert into term_stats (document_id, owner_id, lexeme, ndoc, child_ids, weights)
    select c.document_id, c.owner_id, t.lexeme, count(*)::integer,
           array_agg(c.id order by c.id),
           array_agg(((case when 'A' = any (t.weights) then 2 else 1 end)
                      * (coalesce(array_length(t.positions, 1), 1) * 2.2
                         / (coalesce(array_length(t.positions, 1), 1) + 1.2)))::real order by c.id)
    from child_chunks c, unnest(c.tsv) t
    where c.document_id = p_document_id
    group by c.document_id, c.owner_id, t.lexeme;
    delete from heading_postings where document_id = p_document_id;
    insert into heading_postings (document_id, owner_id, heading_tsv, child_ids)
    select h.document_id, h.owner_id, h.heading_tsv, array_agg(h.id order by h.id)
    from (select c.document_id, c.owner_id, c.id, ts_filter(c.tsv, '{a}') as heading_tsv
          from child_chunks c
          where c.document_id = p_document_id) h
    where length(h.heading_tsv) > 0
    group by h.document_id, h.owner_id, h.heading_tsv;
$$;
