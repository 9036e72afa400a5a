-- Text, JSON, date functions, LIKE/GLOB, subqueries, transactions, views, triggers.
CREATE TABLE words(w TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @ROWS@ / 4)
INSERT OR IGNORE INTO words SELECT lower(hex(i * 2654435761 % 65536)), i FROM n;
COMMIT;
SELECT count(*), min(w), max(w) FROM words;
SELECT count(*) FROM words WHERE w LIKE 'a%';
SELECT count(*) FROM words WHERE w GLOB '*[0-3]f*';
CREATE TABLE log(msg TEXT);
CREATE TRIGGER words_deleted AFTER DELETE ON words BEGIN INSERT INTO log VALUES ('gone ' || old.w); END;
DELETE FROM words WHERE n % 97 = 0;
SELECT count(*) FROM log;
CREATE VIEW long_words AS SELECT w, n FROM words WHERE length(w) = 4;
SELECT count(*), sum(n) FROM long_words;
SELECT json_object('count', (SELECT count(*) FROM words), 'first', (SELECT min(w) FROM words));
SELECT json_extract('{"a":[1,2,{"b":"deep"}]}', '$.a[2].b');
SELECT date('2024-02-28', '+1 day'), strftime('%Y-%j', '2023-12-31'), julianday('2000-01-01');
SELECT w, n FROM words WHERE n IN (SELECT n FROM words ORDER BY w DESC LIMIT 5) ORDER BY w;
SELECT printf('%08.3f|%-6s|%x', 3.14159, 'ab', 255), replace('aaa', 'a', 'bc'), instr('vigil', 'gi');
SELECT sum(length(w)), total(n) / count(*) FROM words;
