-- One issuer however it is named (storage/issuers.py): what a filing's cover says of its registrant
-- besides the name (ingestion/context.py). Documents sharing a file number, a normalised name or a
-- ticker are one issuer. NULL / empty on documents ingested before this migration until
-- `thotqen reindex --context`.
alter table documents add column if not exists former_names text[] not null default '{}';
alter table documents add column if not exists file_number text;    -- "1-3285": one per registrant, kept across renames
alter table documents add column if not exists tickers text[] not null default '{}';
alter table documents add column if not exists incorporated text;   -- state or jurisdiction of incorporation
-- The owner set company / form / period by hand (PATCH /api/documents/{id}, `thotqen document set`):
-- reading the context again must not undo it.
alter table documents add column if not exists context_set_by_owner boolean not null default false;
