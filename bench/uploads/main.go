// Command uploads measures what files cost the server in memory: it builds
// quire, starts it on a fresh database, and has C clients upload a file of
// S bytes each at the same time, then download them all at the same time,
// and prints the server's peak RSS (the kernel's VmHWM, reset before each
// phase) beside its RSS at rest. A server that held each file in memory
// would peak above C*S.
//
//	go run ./bench/uploads                                   # SQLite, 8 x 25 MiB
//	go run ./bench/uploads -db 'postgres://...' -c 8 -size 25MiB
//
// Linux only (/proc). See bench/README.md.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"quire/internal/proc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "uploads:", err)
		os.Exit(1)
	}
}

func run() error {
	db := flag.String("db", "", "database of the server (default: a fresh SQLite file in a temporary directory)")
	conc := flag.Int("c", 8, "concurrent uploads, then concurrent downloads")
	size := flag.Int64("size", 25<<20, "bytes of each file")
	flag.Parse()

	dir, err := os.MkdirTemp("", "quire-uploads-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "quire")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/quire").CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	if *db == "" {
		*db = filepath.Join(dir, "quire.db")
	}
	port, err := proc.FreePort()
	if err != nil {
		return err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "serve", "--db", *db, "--addr", "127.0.0.1:"+strconv.Itoa(port), "--log-level", "warn",
		"--max-upload", strconv.FormatInt(*size, 10))
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	password, err := adminPassword(stdout)
	if err != nil {
		return err
	}
	go io.Copy(io.Discard, stdout)
	if err := waitReady(base); err != nil {
		return err
	}
	token, err := login(base, password)
	if err != nil {
		return err
	}
	docID, err := createDocument(base, token)
	if err != nil {
		return err
	}
	pid := cmd.Process.Pid
	rest, _ := proc.Mem(pid)
	fmt.Printf("quire %s, %d concurrent files of %s, %d cores\n", storeName(*db), *conc, mib(*size), runtime.NumCPU())
	fmt.Printf("rest:      RSS %s\n", mib(rest))

	proc.ResetPeak(pid)
	start := time.Now()
	urls := make([]string, *conc)
	sums := make([]string, *conc)
	err = parallel(*conc, func(i int) error {
		var err error
		urls[i], sums[i], err = upload(base, token, docID, i, *size)
		return err
	})
	if err != nil {
		return err
	}
	_, peak := proc.Mem(pid)
	fmt.Printf("uploads:   peak RSS %s (%d x %s in %.1fs)\n", mib(peak), *conc, mib(*size), time.Since(start).Seconds())

	proc.ResetPeak(pid)
	start = time.Now()
	err = parallel(*conc, func(i int) error { return download(base, token, urls[i], sums[i], *size) })
	if err != nil {
		return err
	}
	_, peak = proc.Mem(pid)
	fmt.Printf("downloads: peak RSS %s (%d x %s in %.1fs)\n", mib(peak), *conc, mib(*size), time.Since(start).Seconds())
	return nil
}

func storeName(db string) string {
	if strings.HasPrefix(db, "postgres") {
		return "on PostgreSQL"
	}
	return "on SQLite"
}

func parallel(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = fn(i) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// upload streams size pseudo-random bytes (incompressible, made as they
// are sent: the client holds none of it) as one multipart file.
func upload(base, token, docID string, i int, size int64) (url, sum string, err error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	h := sha256.New()
	go func() {
		w, err := mw.CreateFormFile("file", fmt.Sprintf("file-%d.bin", i))
		if err == nil {
			src := io.LimitReader(rand.NewChaCha8([32]byte{byte(i)}), size)
			_, err = io.Copy(io.MultiWriter(w, h), src)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest("POST", base+"/api/documentation/documents/"+docID+"/attachments", pr)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", err
	}
	defer res.Body.Close()
	var out struct {
		Attachment struct{ URL, SHA256 string } `json:"attachment"`
	}
	if res.StatusCode != http.StatusCreated || json.NewDecoder(res.Body).Decode(&out) != nil {
		return "", "", fmt.Errorf("upload %d: status %d", i, res.StatusCode)
	}
	if want := hex.EncodeToString(h.Sum(nil)); out.Attachment.SHA256 != want {
		return "", "", fmt.Errorf("upload %d: sha256 %s, sent %s", i, out.Attachment.SHA256, want)
	}
	return out.Attachment.URL, out.Attachment.SHA256, nil
}

func download(base, token, url, sum string, size int64) error {
	req, _ := http.NewRequest("GET", base+url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	h := sha256.New()
	n, err := io.Copy(h, res.Body)
	if err != nil || res.StatusCode != http.StatusOK || n != size || hex.EncodeToString(h.Sum(nil)) != sum {
		return fmt.Errorf("download %s: status %d, %d bytes, %v", url, res.StatusCode, n, err)
	}
	return nil
}

var passwordRE = regexp.MustCompile(`password: (\S+)`)

func adminPassword(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if m := passwordRE.FindStringSubmatch(sc.Text()); m != nil {
			return m[1], nil
		}
	}
	return "", errors.New("the server printed no administrator password (use a fresh database)")
}

func waitReady(base string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if res, err := http.Get(base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("the server did not become ready")
}

func postJSON(base, path, token string, body any, out any) error {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(res.Body)
		return fmt.Errorf("POST %s: %d %s", path, res.StatusCode, msg)
	}
	return json.NewDecoder(res.Body).Decode(out)
}

func login(base, password string) (string, error) {
	var out struct {
		AccessToken string `json:"accessToken"`
	}
	err := postJSON(base, "/api/auth/login", "", map[string]string{"email": "admin@localhost", "password": password}, &out)
	return out.AccessToken, err
}

func createDocument(base, token string) (string, error) {
	var out struct {
		Document struct{ ID string } `json:"document"`
	}
	err := postJSON(base, "/api/documentation/documents", token, map[string]string{"title": "Files"}, &out)
	return out.Document.ID, err
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
