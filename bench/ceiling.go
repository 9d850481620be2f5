package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"quire/auth"
)

// serveBare is the bare-handler ceiling: net/http writing a small JSON
// object, nothing else. Run as its own process under the same pinning as
// quire, it is the most any Go HTTP service can answer on this machine.
func serveBare(addr string, stdout io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	body := []byte(`{"user":{"id":"0193b7c4-7d1e-7000-8000-000000000000","name":"Bare"}}` + "\n")
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
}

// argonRate is the argon2id ceiling: as many goroutines as this process
// has cores verify a password with quire's own function and parameters for
// d, and it prints the verifications per second.
func argonRate(d time.Duration, stdout io.Writer) error {
	hash, err := auth.HashPassword(benchPassword)
	if err != nil {
		return err
	}
	n := runtime.GOMAXPROCS(0)
	var count atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if ok, err := auth.VerifyPassword(hash, benchPassword); err != nil || !ok {
					panic(fmt.Sprintf("verify: %v %v", ok, err))
				}
				count.Add(1)
			}
		}()
	}
	wg.Wait()
	fmt.Fprintf(stdout, "%.2f %d\n", float64(count.Load())/time.Since(start).Seconds(), n)
	return nil
}
