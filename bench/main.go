// Command bench is quire's load harness: it builds quire, seeds (or reuses)
// a database of N documents, starts quire on it and drives it over HTTP on
// 127.0.0.1 with vegeta's attacker, closed loop (concurrency C) or open loop
// (a fixed rate), and prints one line per scenario with the throughput, the
// latencies, the errors and the server's peak RSS, each beside a ceiling
// measured in the same run on the same cores. See bench/README.md.
//
//	go run ./bench -store sqlite -n 10000 -cpu split
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"quire"
	"quire/internal/proc"
	"quire/postgres"
	"quire/sqlite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type config struct {
	stores, cpus, scenarios []string
	ns                      []int
	conc, runs              int
	dur, warmup             time.Duration
	open                    float64
	out, cache              string
	writers                 int
	keep                    bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// Child roles, run pinned by the parent.
	if len(args) > 0 {
		switch args[0] {
		case "_bare":
			return serveBare(args[1], stdout)
		case "_argon":
			d, err := time.ParseDuration(args[1])
			if err != nil {
				return err
			}
			return argonRate(d, stdout)
		case "_like":
			if len(args) != 4 {
				return errors.New("_like STORE DSN ADDR")
			}
			return serveLike(args[1], args[2], args[3], stdout)
		}
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var (
		stores  = fs.String("store", "sqlite,postgres", "stores to measure: sqlite, postgres")
		ns      = fs.String("n", "10000", "document counts, comma-separated (10000, 100000, 1000000)")
		cpus    = fs.String("cpu", "split,shared", "split: server (and its PostgreSQL) on core 0, load generator on core 1; shared: both on both cores")
		scens   = fs.String("scenarios", strings.Join(scenarioNames, ","), "scenarios to run")
		c       = fs.Int("c", 16, "concurrency of the closed loop (requests in flight)")
		dur     = fs.Duration("d", 5*time.Second, "measured duration of each scenario")
		warm    = fs.Duration("warmup", time.Second, "unmeasured load before each scenario")
		runs    = fs.Int("runs", 1, "repeat the whole set this many times and print medians with ranges")
		open    = fs.Float64("open", 0, "also run each read scenario open loop at this fraction of its closed-loop throughput (e.g. 0.5)")
		out     = fs.String("out", "bench/out", "working directory for the build, logs and the run's database copy")
		cache   = fs.String("cache", filepath.Join(os.TempDir(), "quire-bench"), "where seeded databases are kept between runs")
		writers = fs.Int("seed-writers", 32, "concurrent writers while seeding")
		keep    = fs.Bool("keep", false, "leave quire running after the scenarios (for pprof), until interrupted")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := config{stores: split(*stores), cpus: split(*cpus), scenarios: split(*scens), conc: *c, dur: *dur,
		warmup: *warm, runs: *runs, open: *open, out: *out, cache: *cache, writers: *writers, keep: *keep}
	for _, s := range split(*ns) {
		n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
		if err != nil || n < 100 {
			return fmt.Errorf("-n %q: want document counts of at least 100", s)
		}
		cfg.ns = append(cfg.ns, n)
	}
	for _, s := range cfg.scenarios {
		if !slices.Contains(scenarioNames, s) {
			return fmt.Errorf("unknown scenario %q (have %s)", s, strings.Join(scenarioNames, ", "))
		}
	}
	for _, m := range cfg.cpus {
		if m != "split" && m != "shared" {
			return fmt.Errorf("-cpu %q: want split or shared", m)
		}
	}
	if runtime.NumCPU() < 2 && slices.Contains(cfg.cpus, "split") {
		return errors.New("-cpu split needs two cores")
	}
	if slices.Contains(cfg.cpus, "split") {
		if _, err := exec.LookPath("taskset"); err != nil {
			return errors.New("-cpu split needs taskset (util-linux)")
		}
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.cache, 0o755); err != nil {
		return err
	}
	b := &bench{cfg: cfg, stdout: stdout, stderr: stderr, results: map[string][]line{}}
	return b.all(ctx)
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

type bench struct {
	cfg            config
	stdout, stderr io.Writer
	quireBin       string
	self           string
	results        map[string][]line // by key, one per run
	order          []string
}

// line is one printed result.
type line struct {
	key           string
	rps, p50, p99 float64 // req/s, ms, ms
	errs, n       int
	rss           int64
	cpu           float64 // ms of quire's CPU a request (0: not measured)
	ceiling       float64 // req/s of the ceiling this line is compared with
	ceilingName   string
	ratio         float64
	extra         string
}

func (b *bench) all(ctx context.Context) error {
	b.quireBin = filepath.Join(b.cfg.out, "quire")
	fmt.Fprintf(b.stdout, "# building quire -> %s\n", b.quireBin)
	build := exec.CommandContext(ctx, "go", "build", "-tags", os.Getenv("BENCH_TAGS"), "-o", b.quireBin, "./cmd/quire")
	build.Stdout, build.Stderr = b.stderr, b.stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/quire: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	b.self = self
	fmt.Fprintf(b.stdout, "# %s, %d cores, %s; c=%d, %s per scenario after %s warm-up; %d run(s)\n",
		cpuModel(), runtime.NumCPU(), runtime.Version(), b.cfg.conc, b.cfg.dur, b.cfg.warmup, b.cfg.runs)
	for r := 1; r <= b.cfg.runs; r++ {
		for _, store := range b.cfg.stores {
			for _, n := range b.cfg.ns {
				for _, mode := range b.cfg.cpus {
					if err := b.one(ctx, store, n, mode, r); err != nil {
						return fmt.Errorf("%s n=%d cpu=%s: %w", store, n, mode, err)
					}
				}
			}
		}
	}
	if b.cfg.runs > 1 {
		b.summary()
	}
	return nil
}

// cpu layout: the server's cores and the load generator's.
func cores(mode string) (server, load string) {
	if mode == "split" {
		return "0", "1"
	}
	return "", ""
}

func describe(mode string) string {
	if mode == "split" {
		return "split(server:0,load:1)"
	}
	return "shared(0-1)"
}

// pinSelf moves every thread of this process (the load generator) to cpus,
// or back to all cores.
func pinSelf(cpus string) error {
	if cpus == "" {
		cpus = fmt.Sprintf("0-%d", runtime.NumCPU()-1)
		runtime.GOMAXPROCS(runtime.NumCPU())
	} else {
		runtime.GOMAXPROCS(1)
	}
	out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, strconv.Itoa(os.Getpid())).CombinedOutput()
	if err != nil {
		return fmt.Errorf("taskset: %w: %s", err, out)
	}
	return nil
}

func pinned(cpus string, name string, args ...string) *exec.Cmd {
	if cpus == "" {
		return exec.Command(name, args...)
	}
	return exec.Command("taskset", append([]string{"-c", cpus, name}, args...)...)
}

// child is a process the harness started and waits on.
type child struct {
	cmd  *exec.Cmd
	addr string
	done chan error
}

// startChild starts cmd and waits for it to print "listening on ADDR" (or
// quire's "quire listening on http://ADDR").
func startChild(cmd *exec.Cmd, logPath string) (*child, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	c := &child{cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait(); pw.Close(); logf.Close() }()
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			t := sc.Text()
			if i := strings.Index(t, "listening on "); i >= 0 && !sent {
				a := strings.TrimPrefix(t[i+len("listening on "):], "http://")
				addrc <- a
				sent = true
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case a := <-addrc:
		c.addr = a
		return c, nil
	case err := <-c.done:
		return nil, fmt.Errorf("%s exited before listening: %v (log %s)", cmd.Path, err, logPath)
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("%s did not start listening (log %s)", cmd.Path, logPath)
	}
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) stop() {
	proc.Stop(c.cmd.Process, syscall.SIGTERM, c.done, 15*time.Second)
}

// prepare returns the DSN of a fresh copy of the seeded database for store
// and n, seeding it first when the cache has none.
func (b *bench) prepare(ctx context.Context, store string, n int, pg *pgServer) (string, *seedInfo, error) {
	key, err := schemaKey(store)
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("%s-n%d-%s", store, n, key)
	infoPath := filepath.Join(b.cfg.cache, name+".json")
	si, err := readSeedInfo(infoPath)
	cached := err == nil
	switch store {
	case "sqlite":
		cachePath := filepath.Join(b.cfg.cache, name+".db")
		if !cached {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(cachePath + suffix)
			}
			if si, err = b.seedInto(ctx, n, func() (quire.Store, error) { return sqlite.Open(ctx, cachePath) }); err != nil {
				return "", nil, err
			}
			if err := writeSeedInfo(infoPath, si); err != nil {
				return "", nil, err
			}
		}
		runPath := filepath.Join(b.cfg.out, "run.db")
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(runPath + suffix)
		}
		if err := copyFile(cachePath, runPath); err != nil {
			return "", nil, err
		}
		return runPath, si, nil
	case "postgres":
		dbName := strings.NewReplacer("-", "_").Replace(name)
		if ok, err := pg.hasDatabase(ctx, dbName); err != nil {
			return "", nil, err
		} else if !ok {
			cached = false
		}
		if !cached {
			if err := pg.exec(ctx, `DROP DATABASE IF EXISTS `+dbName, `CREATE DATABASE `+dbName); err != nil {
				return "", nil, err
			}
			if si, err = b.seedInto(ctx, n, func() (quire.Store, error) { return postgres.Open(ctx, pg.url(dbName)+"&pool_max_conns=8") }); err != nil {
				return "", nil, err
			}
			if err := writeSeedInfo(infoPath, si); err != nil {
				return "", nil, err
			}
		}
		// Statistics and the visibility map for the planner, in the seed
		// itself (the run's database is a copy of it, catalogs included).
		// Seeds cached before this ran in the right database get it now.
		if ok, err := pg.vacuumed(ctx, dbName); err != nil {
			return "", nil, err
		} else if !ok {
			if err := pg.execIn(ctx, dbName, `VACUUM ANALYZE`); err != nil {
				return "", nil, err
			}
		}
		if err := pg.exec(ctx, `DROP DATABASE IF EXISTS quire_bench_run WITH (FORCE)`,
			`CREATE DATABASE quire_bench_run TEMPLATE `+dbName); err != nil {
			return "", nil, err
		}
		return pg.url("quire_bench_run"), si, nil
	}
	return "", nil, fmt.Errorf("unknown store %q", store)
}

func (b *bench) seedInto(ctx context.Context, n int, open func() (quire.Store, error)) (*seedInfo, error) {
	fmt.Fprintf(b.stdout, "# seeding %d documents through the store (cached afterwards under %s)\n", n, b.cfg.cache)
	st, err := open()
	if err != nil {
		return nil, err
	}
	si, err := seed(ctx, st, n, b.cfg.writers, b.stdout)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(b.stdout, "# seeded %d documents in %.1fs (%.0f/s)\n", n, si.Seconds, float64(n)/si.Seconds)
	return si, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// one runs every scenario for one store, size and cpu layout.
func (b *bench) one(ctx context.Context, store string, n int, mode string, runNo int) error {
	serverCPU, loadCPU := cores(mode)
	if slices.Contains(b.cfg.cpus, "split") {
		if err := pinSelf(""); err != nil {
			return err
		}
	}
	var pg *pgServer
	if store == "postgres" {
		var err error
		if pg, err = startPostgres(b.cfg.cache, serverCPU); err != nil {
			return err
		}
		defer pg.stop()
	}
	dsn, si, err := b.prepare(ctx, store, n, pg)
	if err != nil {
		return err
	}
	if mode == "split" {
		if err := pinSelf(loadCPU); err != nil {
			return err
		}
		defer pinSelf("")
	}
	tag := fmt.Sprintf("%-8s n=%-7d cpu=%s", store, n, describe(mode))

	// Ceilings, on the server's cores.
	bare, err := b.bareCeiling(ctx, serverCPU)
	if err != nil {
		return err
	}
	argon, argonThreads, err := b.argonCeiling(ctx, serverCPU)
	if err != nil {
		return err
	}
	b.print(line{key: tag + " ceiling bare-http", rps: bare.rps(), p50: ms(bare.p50), p99: ms(bare.p99), errs: bare.errs, n: bare.n, ratio: 1,
		ceilingName: "bare"})
	b.print(line{key: tag + " ceiling argon2id", rps: argon, ratio: 1, ceilingName: "argon",
		extra: fmt.Sprintf("hashes/s with m=19MiB t=2 p=1 on %d thread(s)", argonThreads)})

	quireCmd := pinned(serverCPU, b.quireBin, "serve", "--db", dsn, "--addr", "127.0.0.1:0")
	quireCmd.Env = append(os.Environ(), "QUIRE_PUBLIC_URL=http://127.0.0.1")
	q, err := startChild(quireCmd, filepath.Join(b.cfg.out, "quire-"+store+".log"))
	if err != nil {
		return err
	}
	defer q.stop()
	base := "http://" + q.addr
	// The SQLite store answers at once, from its own queries while its
	// index of documents builds: measure the index, once it is built, and
	// say how long that took.
	if ready, ok, err := waitIndex(ctx, base); err != nil {
		return err
	} else if ok {
		fmt.Fprintf(b.stdout, "# %s document index ready %.1fs after quire answered\n", tag, ready.Seconds())
	}
	// At rest: built, nothing asked yet; the peak is the start's and the
	// build's.
	rest, startPeak := proc.Mem(q.pid())
	fmt.Fprintf(b.stdout, "%s quire rss at rest %s (peak while starting %s)\n", tag, mib(rest), mib(startPeak))
	editor, err := login(ctx, base, si.Editor)
	if err != nil {
		return err
	}
	e := &env{base: base, editor: editor, seed: si, conc: b.cfg.conc}
	var listRPS float64
	for _, name := range b.cfg.scenarios {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var l load
		ceil, ceilName := bare.rps(), "bare"
		client := newClient(b.cfg.conc, nil)
		switch name {
		case "me":
			l = load{targets: e.static("GET", "/api/auth/me", editor.hdr)}
		case "get":
			l = load{targets: e.gets()}
		case "get-token":
			hdr, err := editor.apiToken(ctx)
			if err != nil {
				return err
			}
			l = load{targets: e.getsWith(hdr)}
		case "list":
			l = load{targets: e.lists()}
		case "list-filter":
			l = load{targets: e.filtered()}
		case "search":
			l = load{targets: e.searches()}
		case "search-common":
			l = load{targets: e.commonSearches()}
		case "search-status":
			l = load{targets: e.statusSearches()}
			like, err := b.likeLine(ctx, tag, serverCPU, store, dsn, e)
			switch {
			case err == nil:
				ceil, ceilName = like, "like"
			case ctx.Err() != nil:
				return err
			default:
				// The like scan may answer nothing in time (at 1,000,000
				// documents each of its requests reads every published
				// document's text): quire is measured all the same.
				fmt.Fprintf(b.stdout, "# %s ceiling like-scan failed (%v): search-status is given against the bare handler\n", tag, err)
			}
		case "update", "update-keyed":
			pool, err := newUpdatePool(ctx, editor, si.EditorDocs, 4*b.cfg.conc)
			if err != nil {
				return err
			}
			l = load{targets: pool.targets(e)}
			if name == "update-keyed" {
				l.targets = keyed(l.targets)
			}
			client = newClient(b.cfg.conc, pool.tap)
		case "create":
			l = load{targets: e.creates()}
		case "create-keyed":
			l = load{targets: keyed(e.creates())}
		case "login":
			l = load{targets: e.logins()}
			ceil, ceilName = argon, "argon"
		case "flood":
			if err := b.flood(ctx, tag, e, q.pid(), listRPS, argon, bare.rps()); err != nil {
				return err
			}
			continue
		}
		l.name, l.conc, l.client = name, b.cfg.conc, client
		if b.cfg.warmup > 0 {
			l.run(ctx, b.cfg.warmup)
		}
		proc.ResetPeak(q.pid())
		cpu0 := proc.CPU(q.pid())
		st := l.run(ctx, b.cfg.dur)
		cpu := perRequest(proc.CPU(q.pid())-cpu0, st.n)
		_, peak := proc.Mem(q.pid())
		if name == "list" {
			listRPS = st.rps()
		}
		b.print(line{key: fmt.Sprintf("%s closed c=%d %s", tag, b.cfg.conc, name), rps: st.rps(), p50: ms(st.p50), p99: ms(st.p99),
			errs: st.errs, n: st.n, rss: peak, cpu: cpu, ceiling: ceil, ceilingName: ceilName, ratio: st.rps() / ceil, extra: st.firstErr})
		if b.cfg.open > 0 && !strings.HasPrefix(name, "update") && !strings.HasPrefix(name, "create") && name != "login" {
			l.rate = max(1, int(st.rps()*b.cfg.open))
			proc.ResetPeak(q.pid())
			st := l.run(ctx, b.cfg.dur)
			_, peak := proc.Mem(q.pid())
			b.print(line{key: fmt.Sprintf("%s open rate=%.2gx %s", tag, b.cfg.open, name), rps: st.rps(), p50: ms(st.p50), p99: ms(st.p99),
				errs: st.errs, n: st.n, rss: peak, ceiling: ceil, ceilingName: ceilName, ratio: st.rps() / ceil,
				extra: strings.TrimSpace(fmt.Sprintf("at %d/s %s", l.rate, st.firstErr))})
		}
	}
	_, peak := proc.Mem(q.pid())
	rss, _ := proc.Mem(q.pid())
	fmt.Fprintf(b.stdout, "%s quire rss now %s (peak of the last scenario %s)\n", tag, mib(rss), mib(peak))
	if b.cfg.keep {
		fmt.Fprintf(b.stdout, "# quire (pid %d) stays up at %s, token %s; interrupt to stop\n", q.pid(), base, editor.token)
		<-ctx.Done()
	}
	return nil
}

// flood lists at a fixed rate (half the no-flood list throughput) while
// logins run flat out at the closed-loop concurrency, and reports both.
func (b *bench) flood(ctx context.Context, tag string, e *env, pid int, listRPS, argon, bare float64) error {
	if listRPS == 0 {
		listRPS = 1000
		fmt.Fprintf(b.stdout, "# flood: no list run before it; listing at %d/s\n", 500)
	}
	rate := max(1, int(listRPS/2))
	lists := load{name: "flood-list", targets: e.lists(), conc: b.cfg.conc, rate: rate, client: newClient(b.cfg.conc, nil)}
	logins := load{name: "flood-login", targets: e.logins(), conc: b.cfg.conc, client: newClient(b.cfg.conc, nil)}
	proc.ResetPeak(pid)
	lctx, cancel := context.WithCancel(ctx)
	loginDone := make(chan stats, 1)
	go func() { loginDone <- logins.run(lctx, b.cfg.dur+b.cfg.warmup*2) }()
	if b.cfg.warmup > 0 {
		time.Sleep(b.cfg.warmup) // logins reach their pace before the reads are measured
	}
	st := lists.run(ctx, b.cfg.dur)
	cancel()
	ls := <-loginDone
	_, peak := proc.Mem(pid)
	// The rate follows the list figure of the run, so it stays out of the
	// key by which runs are grouped for the medians.
	b.print(line{key: fmt.Sprintf("%s open %s flood-list", tag, "rate=list/2"), rps: st.rps(), p50: ms(st.p50), p99: ms(st.p99),
		errs: st.errs, n: st.n, rss: peak, ceiling: listRPS, ceilingName: "list", ratio: st.rps() / listRPS,
		extra: strings.TrimSpace(fmt.Sprintf("at %d/s %s", rate, st.firstErr))})
	b.print(line{key: fmt.Sprintf("%s closed c=%d flood-login", tag, b.cfg.conc), rps: ls.rps(), p50: ms(ls.p50), p99: ms(ls.p99),
		errs: ls.errs, n: ls.n, rss: peak, ceiling: argon, ceilingName: "argon", ratio: ls.rps() / argon, extra: ls.firstErr})
	return nil
}

func (b *bench) bareCeiling(ctx context.Context, cpus string) (stats, error) {
	c, err := startChild(pinned(cpus, b.self, "_bare", "127.0.0.1:0"), filepath.Join(b.cfg.out, "bare.log"))
	if err != nil {
		return stats{}, err
	}
	defer c.stop()
	e := &env{base: "http://" + c.addr}
	l := load{name: "bare", targets: e.static("GET", "/", nil), conc: b.cfg.conc, client: newClient(b.cfg.conc, nil)}
	if b.cfg.warmup > 0 {
		l.run(ctx, b.cfg.warmup)
	}
	st := l.run(ctx, b.cfg.dur)
	if st.errs > 0 {
		return st, fmt.Errorf("bare handler: %d errors: %s", st.errs, st.firstErr)
	}
	return st, nil
}

func (b *bench) argonCeiling(ctx context.Context, cpus string) (float64, int, error) {
	d := b.cfg.dur
	out, err := pinned(cpus, b.self, "_argon", d.String()).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("argon ceiling: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("argon ceiling: %q", out)
	}
	rate, err1 := strconv.ParseFloat(f[0], 64)
	threads, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("argon ceiling: %q", out)
	}
	return rate, threads, nil
}

func (b *bench) print(l line) {
	var s strings.Builder
	fmt.Fprintf(&s, "%-62s req/s=%-8.0f", l.key, l.rps)
	if l.ceilingName != "" && l.ratio != 1 {
		fmt.Fprintf(&s, " (%.2f of %s %.0f)", l.ratio, l.ceilingName, l.ceiling)
	}
	if l.n > 0 {
		fmt.Fprintf(&s, " p50=%.2fms p99=%.2fms errors=%d/%d", l.p50, l.p99, l.errs, l.n)
	}
	if l.rss > 0 {
		fmt.Fprintf(&s, " peak-rss=%s", mib(l.rss))
	}
	if l.cpu > 0 {
		fmt.Fprintf(&s, " cpu=%.2fms/req", l.cpu)
	}
	if l.extra != "" {
		fmt.Fprintf(&s, "  [%s]", l.extra)
	}
	fmt.Fprintln(b.stdout, s.String())
	if _, ok := b.results[l.key]; !ok {
		b.order = append(b.order, l.key)
	}
	b.results[l.key] = append(b.results[l.key], l)
}

// summary prints the median and range of every figure over the runs.
func (b *bench) summary() {
	fmt.Fprintf(b.stdout, "\n# medians of %d runs [min-max]\n", b.cfg.runs)
	for _, k := range b.order {
		ls := b.results[k]
		med := func(f func(line) float64) string {
			v := make([]float64, len(ls))
			for i, l := range ls {
				v[i] = f(l)
			}
			sort.Float64s(v)
			return fmt.Sprintf("%.4g [%.4g-%.4g]", median(v), v[0], v[len(v)-1])
		}
		s := fmt.Sprintf("%-62s req/s=%s ratio=%s", k, med(func(l line) float64 { return l.rps }), med(func(l line) float64 { return l.ratio }))
		if ls[0].n > 0 {
			s += fmt.Sprintf(" p50=%sms p99=%sms errors=%s", med(func(l line) float64 { return l.p50 }),
				med(func(l line) float64 { return l.p99 }), med(func(l line) float64 { return float64(l.errs) }))
		}
		if ls[0].rss > 0 {
			s += fmt.Sprintf(" peak-rss-MiB=%s", med(func(l line) float64 { return float64(l.rss) / (1 << 20) }))
		}
		if ls[0].cpu > 0 {
			s += fmt.Sprintf(" cpu-ms/req=%s", med(func(l line) float64 { return l.cpu }))
		}
		fmt.Fprintln(b.stdout, s)
	}
}

// perRequest is cpu shared over n requests, in ms; 0 when not measured.
func perRequest(cpu time.Duration, n int) float64 {
	if cpu <= 0 || n == 0 {
		return 0
	}
	return float64(cpu) / float64(time.Millisecond) / float64(n)
}

func median(v []float64) float64 {
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mib(b int64) string { return fmt.Sprintf("%.0fMiB", float64(b)/(1<<20)) }

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if i := strings.IndexByte(l, ':'); i >= 0 {
				return strings.TrimSpace(l[i+1:])
			}
		}
	}
	return runtime.GOARCH
}

// waitIndex waits until quire's /metrics says its index of documents is
// built, and returns how long that took; ok is false when quire reports no
// index (PostgreSQL).
func waitIndex(ctx context.Context, base string) (time.Duration, bool, error) {
	start := time.Now()
	for {
		req, err := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
		if err != nil {
			return 0, false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, false, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, false, err
		}
		switch {
		case !bytes.Contains(body, []byte("\nquire_document_index_ready ")):
			return 0, false, nil
		case bytes.Contains(body, []byte("\nquire_document_index_ready 1\n")):
			return time.Since(start), true, nil
		}
		select {
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
