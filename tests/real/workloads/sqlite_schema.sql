-- Tables, bulk inserts from recursive CTEs, indexes, joins, aggregates, window functions.
-- @ROWS@ is replaced by the row count of the run.
CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, score REAL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER REFERENCES customers(id), amount INTEGER, day INTEGER, note TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @ROWS@ / 10)
INSERT INTO customers SELECT i, 'customer' || i, 'city' || (i * 7 % 23), (i * 37 % 1000) / 10.0 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @ROWS@)
INSERT INTO orders SELECT i, 1 + (i * 7919 % (@ROWS@ / 10)), (i * 104729) % 10007, i % 365, hex(randomblob(0)) || printf('n%06d', i) FROM n;
SELECT count(*), sum(amount), min(amount), max(amount) FROM orders;
CREATE INDEX orders_by_customer ON orders(customer);
CREATE INDEX orders_by_day ON orders(day, amount);
SELECT c.city, count(*), sum(o.amount), round(avg(o.amount), 3)
  FROM orders o JOIN customers c ON c.id = o.customer GROUP BY c.city ORDER BY c.city;
SELECT c.name, total FROM (SELECT customer, sum(amount) AS total FROM orders GROUP BY customer) t
  JOIN customers c ON c.id = t.customer ORDER BY total DESC, c.name LIMIT 10;
SELECT day, amount, rank() OVER (PARTITION BY day ORDER BY amount DESC) AS r FROM orders
  WHERE day IN (5, 100, 300) ORDER BY day, r, amount LIMIT 30;
SELECT city, score, sum(score) OVER (PARTITION BY city ORDER BY score, id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
  FROM customers WHERE id % 50 = 0 ORDER BY city, score, id;
UPDATE orders SET amount = amount + 1 WHERE day % 10 = 0;
DELETE FROM orders WHERE amount % 13 = 0;
SELECT count(*), sum(amount), total(amount * 1.5) FROM orders;
SELECT upper(substr(name, 1, 4)), length(group_concat(id, ',')) FROM customers GROUP BY 1 ORDER BY 1;
SELECT customer, count(*) FROM orders GROUP BY customer HAVING count(*) > 12 ORDER BY 2 DESC, 1 LIMIT 5;
EXPLAIN QUERY PLAN SELECT * FROM orders WHERE customer = 5 AND day > 10;
PRAGMA integrity_check;
