-- unique_states_bits_all: the bit(8) text of unique_states_bits(mask) for every mask 0..=255,
-- in mask order (@S@ = the quoted schema).
SELECT pg_catalog.array_agg(@S@.unique_states_bits(m)::text ORDER BY m)
FROM pg_catalog.generate_series(0, 255) AS m
