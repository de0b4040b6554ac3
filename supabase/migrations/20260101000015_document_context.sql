-- What a document says it is (ingestion/context.py): the company, form and fiscal period read from
-- its own cover page, title or running headers, never from the file name. NULL where nothing was
-- found, and on documents ingested before this migration until `thotqen reindex --context`.
-- Searches may narrow a user's documents by these (storage/documents.py matching_documents).
alter table documents add column if not exists company text;
alter table documents add column if not exists form text;        -- 10-K | 10-Q | 8-K | earnings release | ...
alter table documents add column if not exists period text;      -- FY2022 | Q2 FY2024 | 2022-07-01
alter table documents add column if not exists period_end date;  -- the last day of that period (or the report date)
