#!/usr/bin/env bash
# Builds the slow-queries.json samples from real PostgreSQL plans: a shop's
# schema (not hex.pm's) in a throwaway database, seeded with a long tail
# and a few very large parents; a migration that adds a status column and
# filters on it; EXPLAIN (ANALYZE, BUFFERS) of the order list query before
# the migration, after it, and with the index a profiling run would try.
# Needs psql and jq, and a PostgreSQL that trusts the local user
# (PGHOST=127.0.0.1 PGUSER=postgres by default).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PGHOST=${PGHOST:-127.0.0.1} PGUSER=${PGUSER:-postgres}
db=pitcrew_slowq_sample
psql -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
trap 'psql -q -d postgres -c "DROP DATABASE IF EXISTS $db"' EXIT
q() { psql -q -X -A -t -d "$db" -c "$1"; }

q "CREATE TABLE customers (id bigserial PRIMARY KEY, name text NOT NULL, inserted_at timestamp NOT NULL DEFAULT now())"
q "CREATE TABLE orders (id bigserial PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers, total_cents bigint NOT NULL, inserted_at timestamp NOT NULL)"
q "CREATE INDEX orders_customer_id_index ON orders (customer_id)"
# A long tail of customers, a few with very many orders.
q "INSERT INTO customers (name) SELECT 'customer ' || i FROM generate_series(1, 20000) i"
q "INSERT INTO orders (customer_id, total_cents, inserted_at)
   SELECT CASE WHEN i % 10 < 4 THEN 1 + (i % 5) ELSE 1 + (i::bigint * 7919) % 20000 END, (i::bigint * 37) % 100000, now() - (i || ' minutes')::interval
   FROM generate_series(1, 300000) i"
q "ANALYZE"
list="SELECT o.id, o.total_cents FROM orders o WHERE o.customer_id = 3 ORDER BY o.inserted_at DESC LIMIT 20"
explain() { q "EXPLAIN (ANALYZE, BUFFERS) $1"; }
before=$(explain "$list")
# The migration: orders get a status, and the list shows open orders only.
q "ALTER TABLE orders ADD COLUMN status text NOT NULL DEFAULT 'open'"
q "UPDATE orders SET status = 'shipped' WHERE id % 3 <> 0"
q "ANALYZE orders"
listed="SELECT o.id, o.total_cents FROM orders o WHERE o.customer_id = 3 AND o.status = 'open' ORDER BY o.inserted_at DESC LIMIT 20"
after=$(explain "$listed")
q "CREATE INDEX orders_customer_id_status_inserted_at_index ON orders (customer_id, status, inserted_at DESC)"
fixed=$(explain "$listed")
exec_ms() { sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' <<<"$1"; }
rows() { q "SELECT count(*) FROM $1"; }

jq -n --arg before "$before" --arg after "$after" --arg fixed "$fixed" \
  --argjson b "$(exec_ms "$before")" --argjson a "$(exec_ms "$after")" --argjson f "$(exec_ms "$fixed")" \
  --argjson customers "$(rows customers)" --argjson orders "$(rows orders)" --arg sql "$listed" '{
  before_commit: "1111111111111111111111111111111111111111",
  after_commit: "2222222222222222222222222222222222222222",
  threshold_ms: 50,
  seed: {tables: [{table: "customers", rows: $customers}, {table: "orders", rows: $orders}],
         materialized_views_refreshed: true, production: null},
  pages: [{page: "/customers/3/orders", before_ms: ($b + 6), after_ms: ($a + 6)}, {page: "/customers", before_ms: 12, after_ms: 12.5}],
  queries: [{
    fingerprint: "orders by customer and status", sql: $sql, pages: ["/customers/3/orders"],
    ecto: {function: "Shop.Orders.list_open_orders/2", file: "lib/shop/orders.ex", line: 42},
    calls_per_page: 1,
    before: {ms: $b, plan: $before}, after: {ms: $a, plan: $after},
    indexes_used: ["orders_customer_id_index"], indexes_skipped: [],
    fix: {kind: "index", change: "create index(:orders, [:customer_id, :status, \"inserted_at DESC\"])",
          measure: {ms: $f, plan: $fixed}, same_rows: null,
          write_cost: {tables: ["orders"], without_ms: 0.21, with_ms: 0.27}}
  }]}' >"$here/agrees.json"

# The same report, its numbers edited the ways a report can be wrong.
jq '.queries[0].after.ms *= 3' "$here/agrees.json" >"$here/time_disagrees.json"
jq '.queries[0].after.plan = null' "$here/agrees.json" >"$here/no_plan.json"
jq '.queries[0].fix.measure.plan = .queries[0].after.plan | .queries[0].fix.measure.ms = (.queries[0].after.ms / 10)' "$here/agrees.json" >"$here/fix_not_faster.json"
jq '.queries[0].fix.write_cost = null' "$here/agrees.json" >"$here/index_no_write_cost.json"
jq '.queries[0].fix = {kind: "rewrite", change: "from o in Order, where: o.customer_id == ^id and o.status == \"open\"", measure: .queries[0].fix.measure, same_rows: null, write_cost: null}' "$here/agrees.json" >"$here/rewrite_unchecked.json"
jq '.queries[0].ecto.line = 0' "$here/agrees.json" >"$here/malformed.json"
