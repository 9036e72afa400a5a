-- sqlite3 benchmark: bulk insert, index build, joins and aggregates. @ROWS@ scales the work.
CREATE TABLE items(id INTEGER PRIMARY KEY, grp INTEGER, val INTEGER, label TEXT);
CREATE TABLE groups(id INTEGER PRIMARY KEY, name TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @ROWS@)
INSERT INTO items SELECT i, i % 1000, (i * 2654435761) % 1000003, printf('label-%d', i % 5000) FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
INSERT INTO groups SELECT i, 'group' || i FROM n;
CREATE INDEX items_val ON items(val);
CREATE INDEX items_label ON items(label, grp);
SELECT count(*), sum(val) FROM items WHERE val BETWEEN 1000 AND 500000;
SELECT g.name, count(*), avg(i.val) FROM items i JOIN groups g ON g.id = i.grp GROUP BY g.id ORDER BY 3 DESC LIMIT 3;
SELECT label, count(*) FROM items GROUP BY label ORDER BY 2 DESC, 1 LIMIT 3;
SELECT count(DISTINCT val % 977) FROM items;
