-- clawpit registry schema v13 (PostgreSQL): an index of the characters of
-- the fields the console's task filter searches (the same text as 0011's
-- trigram index, lowercased as ILIKE folds it under the C collation: ASCII
-- only), so a one- or two-character `/` keystroke, which has no trigram to
-- look up, finds the rows holding its characters instead of reading the
-- pane's order to the end: `z` over 10,000,000 tasks read every row (9.9 s).
-- Each row's distinct characters are a handful of GIN keys. The expression
-- is store/window.go's pgTaskChars, term for term. Built-in functions only
-- (string_to_array splits into characters), so no extension is needed.
CREATE INDEX IF NOT EXISTS tasks_filter_chars ON tasks USING gin (string_to_array(lower(((id || chr(1) || status || chr(1) || runtime || chr(1) || coalesce(win_name, '') || chr(1) || coalesce(nullif(child_session, ''), owner_session, '') || chr(1) || delivery_status || chr(1) || error) COLLATE "C")), NULL));
-- Statistics for the new expression at once (autovacuum's come later):
-- without them a common character is taken for a rare one.
ANALYZE tasks;
