-- Issue 41. What a question costs, counted in tokens rather than questions: its question and the
-- earlier turns the model sees, estimated at admission (answering/accounting.py `cost`), summed over
-- the rolling minute and hour for the per-user budgets QUESTION_TOKENS_PER_MINUTE and _PER_HOUR.
alter table query_log add column if not exists prompt_tokens integer not null default 0;
