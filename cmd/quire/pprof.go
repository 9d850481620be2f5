//go:build pprof

package main

// Built with -tags pprof (the load harness does so with BENCH_TAGS=pprof),
// quire serves net/http/pprof on 127.0.0.1:6061, for profiling the server
// under load; no release build has it.

import (
	"net/http"
	_ "net/http/pprof"
)

func init() {
	go http.ListenAndServe("127.0.0.1:6061", nil)
}
