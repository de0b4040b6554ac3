-- The sparse side's inverted index becomes postings: one row per (filing, lexeme), not per (chunk, lexeme).
--
-- child_terms (sql/004_child_terms.sql) held a row per chunk and lexeme, indexed twice: about
-- 14 KB per chunk, 940 MB at 65,000 chunks, the largest thing in the database and growing with
-- every filing of every user (evals/results/search_scale.md). term_stats already holds a row per
-- filing and lexeme (its chunk count, for the IDF); it now also carries that lexeme's postings,
-- the chunk ids and their BM25-style weights as two parallel arrays (compressed by TOAST), built
-- in one statement when a filing's chunks are written. A query term reads one row per filing in
-- scope through the (owner_id, lexeme) index and unnests it.
alter table term_stats add column if not exists child_ids bigint[] not null default '{}';
alter table term_stats add column if not exists weights real[] not null default '{}';

-- Filings stored before the postings existed get theirs, built as refresh_term_postings() builds them
-- (sql/functions/refresh_term_postings.sql holds that function, and the weight's definition).
insert into term_stats (document_id, owner_id, lexeme, ndoc, child_ids, weights)
select c.document_id, c.owner_id, t.lexeme, count(*)::integer,
       array_agg(c.id order by c.id),
       array_agg(((case when 'A' = any (t.weights) then 2 else 1 end)
                  * (coalesce(array_length(t.positions, 1), 1) * 2.2
                     / (coalesce(array_length(t.positions, 1), 1) + 1.2)))::real order by c.id)
from child_chunks c, unnest(c.tsv) t
where c.document_id in (select s.document_id from term_stats s where s.child_ids = '{}')
group by c.document_id, c.owner_id, t.lexeme
on conflict (document_id, lexeme) do update
    set ndoc = excluded.ndoc, child_ids = excluded.child_ids, weights = excluded.weights;
delete from term_stats where child_ids = '{}';

drop trigger if exists child_chunks_terms on child_chunks;
drop function if exists child_terms_sync();
drop table if exists child_terms;

-- hybrid_search()'s current body: sql/functions/hybrid_search.sql.
