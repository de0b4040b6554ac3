-- A better sparse side: document frequencies per lexeme, and words that describe the task.
--
-- Postgres' ts_rank has no IDF: "company" counts as much as "capex". term_stats keeps, per
-- document, how many child chunks hold each lexeme (filled at ingestion, in the same transaction),
-- so hybrid_search() can drop lexemes too common in the searched scope and weight the rest by IDF.
create table if not exists term_stats (
    document_id uuid not null references documents(id) on delete cascade,
    owner_id    bigint not null,
    lexeme      text not null,
    ndoc        integer not null,
    primary key (document_id, lexeme)
);
create index if not exists term_stats_owner_lexeme_idx on term_stats (owner_id, lexeme);

alter table documents add column if not exists children integer not null default 0;

-- Words that say what to do with the answer, not what to find ("Give a response to the question by
-- relying on the details shown in ..."). Stored as English-stemmed lexemes, as in the tsvectors.
create table if not exists query_stopwords (lexeme text primary key);
insert into query_stopwords (lexeme)
select distinct l from unnest(tsvector_to_array(to_tsvector('english',
    'answer answers question questions response respond relying rely details detail shown show showing '
    'based basing base information info provided provide provides calculate calculation compute computing '
    'round rounded decimal places place units unit assume assuming analyst analysts please help give '
    'following follow primarily mainly using use used define defined definition judgment judgments '
    'drawing draw conclusions conclusion outlined outline agreement considering consider taking take '
    'account best ability abilities lost internet connection access want know tell explain state stated '
    'only shown herein reported report reporting'))) as l
on conflict do nothing;

-- Backfill documents ingested before term_stats existed (a no-op on a new database).
insert into term_stats (document_id, owner_id, lexeme, ndoc)
select d.id, d.owner_id, s.word, s.ndoc
from documents d
cross join lateral ts_stat(format('select tsv from child_chunks where document_id = %L', d.id)) s
where d.status = 'ready'
  and not exists (select 1 from term_stats t where t.document_id = d.id)
on conflict do nothing;

update documents d set children = (select count(*) from child_chunks c where c.document_id = d.id)
where d.status = 'ready' and d.children = 0;
