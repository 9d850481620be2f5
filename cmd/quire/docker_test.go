package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dockerfile is what deploy/Dockerfile says, as far as the image's
// filesystem and its start go: the build stage's RUN lines, and the final
// stage's COPY lines, user, environment, entry point, command and
// HEALTHCHECK command.
type dockerfile struct {
	buildRuns   []string
	copies      []dockerCopy
	uid, gid    int
	env         []string
	entrypoint  []string
	cmd         []string
	healthcheck []string
}

type dockerCopy struct {
	src, dst string
	uid, gid int // -1: root's, as COPY without --chown
}

// parseDockerfile reads the instructions the test knows; any other in the
// final stage fails the test, so that a change of the Dockerfile is a
// change the test takes in, not one it silently ignores.
func parseDockerfile(t *testing.T, path string) *dockerfile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	var cur strings.Builder
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || (l == "" && cur.Len() == 0) {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(l)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	df := &dockerfile{uid: 0, gid: 0}
	stages := 0
	jsonArgs := func(s string) []string {
		var v []string
		if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &v); err != nil {
			t.Fatalf("Dockerfile: %q is not an exec-form JSON array: %v", s, err)
		}
		return v
	}
	ids := func(s string) (int, int) {
		u, g, _ := strings.Cut(s, ":")
		uid, err1 := strconv.Atoi(u)
		gid, err2 := strconv.Atoi(g)
		if err1 != nil || err2 != nil {
			t.Fatalf("Dockerfile: user %q is not numeric uid:gid (the empty base has no /etc/passwd)", s)
		}
		return uid, gid
	}
	final := false
	for _, l := range lines {
		word, rest, _ := strings.Cut(l, " ")
		if word == "FROM" {
			stages++
			final = strings.HasPrefix(rest, "scratch")
			continue
		}
		if !final {
			if word == "RUN" {
				df.buildRuns = append(df.buildRuns, rest)
			}
			continue
		}
		switch word {
		case "COPY":
			c := dockerCopy{uid: -1, gid: -1}
			f := strings.Fields(rest)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				if own, ok := strings.CutPrefix(f[0], "--chown="); ok {
					c.uid, c.gid = ids(own)
				} else if f[0] != "--from=build" {
					t.Fatalf("Dockerfile: COPY option %s unknown to the test", f[0])
				}
				f = f[1:]
			}
			if len(f) != 2 {
				t.Fatalf("Dockerfile: COPY %q: want one source and one destination", rest)
			}
			c.src, c.dst = f[0], f[1]
			df.copies = append(df.copies, c)
		case "USER":
			df.uid, df.gid = ids(rest)
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				if !strings.Contains(kv, "=") {
					t.Fatalf("Dockerfile: ENV %q: want KEY=VALUE", kv)
				}
				df.env = append(df.env, kv)
			}
		case "ENTRYPOINT":
			df.entrypoint = jsonArgs(rest)
		case "CMD":
			df.cmd = jsonArgs(rest)
		case "HEALTHCHECK":
			_, c, ok := strings.Cut(rest, "CMD ")
			if !ok {
				t.Fatalf("Dockerfile: HEALTHCHECK %q has no CMD", rest)
			}
			df.healthcheck = jsonArgs(c)
		case "VOLUME", "EXPOSE":
		default:
			t.Fatalf("Dockerfile: %s in the final stage is unknown to the test", word)
		}
	}
	if stages != 2 || df.entrypoint == nil {
		t.Fatalf("Dockerfile: want a build stage and a final stage FROM scratch with an ENTRYPOINT")
	}
	return df
}

// buildImageFS lays out in a new directory exactly the files the image
// has: the build stage's RUN lines run with its /out in a temporary
// directory (the go build as the image builds it: CGO_ENABLED=0, static),
// then each COPY of the final stage, with its owner.
func buildImageFS(t *testing.T, df *dockerfile) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range df.buildRuns {
		if run == "go mod download" {
			continue // go build downloads what it needs
		}
		cmd := exec.Command("sh", "-c", strings.ReplaceAll(run, "/out/", out+"/"))
		cmd.Dir = src
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("RUN %s: %v\n%s", run, err, b)
		}
	}
	root := t.TempDir()
	openUp(t, root)
	for _, c := range df.copies {
		from := c.src
		if rest, ok := strings.CutPrefix(c.src, "/out/"); ok {
			from = filepath.Join(out, rest)
		}
		// Other sources are files of the golang image (the CA
		// certificates), which Debian has at the same place.
		to := filepath.Join(root, c.dst)
		if err := copyTree(from, to, c.uid, c.gid); err != nil {
			t.Fatalf("COPY %s %s: %v", c.src, c.dst, err)
		}
	}
	return root
}

// copyTree copies a file or a directory's tree, with the modes, owned by
// uid:gid (root's when -1), as COPY does.
func copyTree(from, to string, uid, gid int) error {
	uid, gid = max(uid, 0), max(gid, 0)
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if d.IsDir() {
			if err := os.Mkdir(dst, 0o700); err != nil && !os.IsExist(err) {
				return err
			}
		} else {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(dst, b, 0o600); err != nil {
				return err
			}
		}
		if err := os.Lchown(dst, uid, gid); err != nil {
			return err
		}
		return os.Chmod(dst, fi.Mode().Perm()|fi.Mode()&(fs.ModeSticky|fs.ModeSetuid|fs.ModeSetgid))
	})
}

// imageCommand is args run in the image's filesystem as its user, with its
// environment (and Docker's own PATH and HOME), plus extra variables.
func imageCommand(root string, df *dockerfile, extra []string, args ...string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/"}, df.env...)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uint32(df.uid), Gid: uint32(df.gid)}}
	return cmd
}

// TestDockerImageStarts builds the image's filesystem as deploy/Dockerfile
// makes it and runs its entry point in it (chroot, as the image's user,
// with its environment): no Docker engine runs here. The server starts on
// an empty volume and again on the migrated database, answers /healthz,
// takes an upload (spooled to the temporary directory), and the image's
// HEALTHCHECK command says it is alive, then, once it stopped, that it is
// not.
func TestDockerImageStarts(t *testing.T) {
	t.Parallel()
	needRoot(t)
	df := parseDockerfile(t, "../../deploy/Dockerfile")
	if len(df.healthcheck) == 0 {
		t.Fatal("the Dockerfile has no HEALTHCHECK CMD")
	}
	root := buildImageFS(t, df)
	_, port, _ := net.SplitHostPort(freeAddr(t))
	// As docker run -p maps it; the image listens on every address.
	extra := []string{"QUIRE_ADDR=0.0.0.0:" + port, "QUIRE_PUBLIC_URL=http://127.0.0.1:" + port}
	base := "http://127.0.0.1:" + port

	healthy := func() (string, error) {
		b, err := imageCommand(root, df, extra, df.healthcheck...).CombinedOutput()
		return string(b), err
	}
	var password string
	for run := 1; run <= 2; run++ {
		cmd := imageCommand(root, df, extra, append(df.entrypoint, df.cmd...)...)
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("start the image's entry point: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() error {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-exited:
				return err
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				return fmt.Errorf("no exit within 30s of SIGTERM")
			}
		}
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(stdout.String(), "listening on") {
			select {
			case err := <-exited:
				t.Fatalf("start %d: the server stopped: %v\nstdout %s\nstderr %s", run, err, stdout.String(), tail(stderr.String(), 2000))
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				stop()
				t.Fatalf("start %d: no listening line in 60s\nstderr %s", run, tail(stderr.String(), 2000))
			}
		}
		if m := regexp.MustCompile(`password: (\S+)`).FindStringSubmatch(stdout.String()); m != nil {
			password = m[1]
		}
		res, err := http.Get(base + "/healthz")
		if err != nil || res.StatusCode != http.StatusOK {
			t.Errorf("start %d: /healthz: %v %v", run, err, res)
		}
		if res != nil {
			res.Body.Close()
		}
		if out, err := healthy(); err != nil {
			t.Errorf("start %d: the HEALTHCHECK command %v failed on a running server: %v: %s", run, df.healthcheck, err, out)
		}
		uploadThroughImage(t, base, password)
		if err := stop(); err != nil {
			t.Errorf("start %d: stop: %v\nstderr %s", run, err, tail(stderr.String(), 2000))
		}
		if strings.Contains(stderr.String(), `"level":"ERROR"`) {
			t.Errorf("start %d: errors logged:\n%s", run, errorLines(stderr.String()))
		}
	}
	if out, err := healthy(); err == nil {
		t.Errorf("the HEALTHCHECK command succeeded with no server: %s", out)
	}
	if _, err := os.Stat(filepath.Join(root, "data", "quire.db")); err != nil {
		t.Errorf("the database is not in the volume /data: %v", err)
	}
}

// uploadThroughImage signs in as the first administrator, creates a
// document and uploads a file to it.
func uploadThroughImage(t *testing.T, base, password string) {
	t.Helper()
	var login struct{ AccessToken string }
	if status := post(t, "POST", base+"/api/auth/login", "", map[string]string{"email": "admin@localhost", "password": password}, &login); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}
	var created struct{ Document struct{ ID string } }
	if status := post(t, "POST", base+"/api/documentation/documents", login.AccessToken, map[string]string{"title": "Files"}, &created); status != http.StatusCreated {
		t.Fatalf("create a document: %d", status)
	}
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	w, _ := mw.CreateFormFile("file", "notes.txt")
	w.Write(bytes.Repeat([]byte("quire in a container\n"), 1000))
	mw.Close()
	req, _ := http.NewRequest("POST", base+"/api/documentation/documents/"+created.Document.ID+"/attachments", &b)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+login.AccessToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		t.Errorf("upload: %d %s", res.StatusCode, body)
	}
}

// errorLines returns the log lines at level ERROR.
func errorLines(log string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"level":"ERROR"`) {
			b.WriteString(sc.Text() + "\n")
		}
	}
	return b.String()
}
