-- Migration 10: the chain and gas price of each swap route. Frozen: never edited once released.
-- A route's cost in USD needs the chain it runs on (to price its tokens and its gas from the
-- prices table) and the chain's gas price, in wei per gas, read when the route was answered.
ALTER TABLE swap_routes ADD COLUMN chain BIGINT;
ALTER TABLE swap_routes ADD COLUMN gas_price_wei HUGEINT;
