-- child_chunks_tsv_update(): the full-text vector follows the text, heading weighted A: a trigger, so
-- no writer can forget it. Its one body, with its trigger (a repeatable file, sql/__init__.py).
create or replace function child_chunks_tsv_update() returns trigger language plpgsql as $$
begin
    new.tsv := setweight(to_tsvector('english', coalesce(new.heading, '')), 'A')
            || setweight(to_tsvector('english', new.text), 'B');
    return new;
end $$;

drop trigger if exists child_chunks_tsv on child_chunks;
create trigger child_chunks_tsv before insert or update of text, heading on child_chunks
    for each row execute function child_chunks_tsv_update();
