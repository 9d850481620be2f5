//go:build pprof

package main

// Built with -tags pprof (the load harness does so with BENCH_TAGS=pprof),
// quire serves net/http/pprof on 127.0.0.1:6061, or on QUIRE_PPROF_ADDR
// when that is set (so that two profiled benches can run side by side),
// for profiling the server under load; no release build has it.

import (
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("QUIRE_PPROF_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6061"
	}
	go http.ListenAndServe(addr, nil)
}
