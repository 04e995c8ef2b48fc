module example.com/awa-bulk-producer

go 1.25.0

require (
	github.com/jackc/pgx/v5 v5.12.0
	lukechampine.com/blake3 v1.4.1
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/klauspost/cpuid/v2 v2.0.9 // indirect
	golang.org/x/text v0.41.0 // indirect
)
