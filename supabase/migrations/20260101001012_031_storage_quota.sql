-- Issue 41. A storage quota per user (storage/quota.py): every upload counts what its uploader's
-- documents keep, in every space (a workspace's too), by who uploaded them (a document from before
-- uploaded_by: its owner). This index answers that count and sum without reading the table.
create index if not exists documents_uploader_idx on documents ((coalesce(uploaded_by, owner_id))) include (size_bytes);
