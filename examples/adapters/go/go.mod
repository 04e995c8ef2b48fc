module example.com/awa-conformance-adapter

go 1.19
