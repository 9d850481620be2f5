package main

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestServeMaxUpload checks that QUIRE_MAX_UPLOAD (--max-upload) bounds a
// file, and that an upload route is held to it rather than --max-body.
func TestServeMaxUpload(t *testing.T) {
	t.Parallel()
	s := startServe(t, env(map[string]string{"QUIRE_MAX_UPLOAD": "4KiB", "QUIRE_MAX_BODY": "1KiB"}),
		"--db", migratedDB(t))
	password := regexp.MustCompile(`password: (\S+)`).FindStringSubmatch(s.stdout.String())
	if password == nil {
		t.Fatalf("no administrator password in %q", s.stdout.String())
	}
	post := func(path, token, contentType string, body []byte) (int, map[string]any) {
		t.Helper()
		return decoded(send(t, "POST", s.base+path, token, contentType, bytes.NewReader(body)))
	}
	_, login := post("/api/auth/login", "", "application/json",
		[]byte(fmt.Sprintf(`{"email":"admin@localhost","password":%q}`, password[1])))
	token, _ := login["accessToken"].(string)
	status, created := post("/api/documentation/documents", token, "application/json", []byte(`{"title":"Files"}`))
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, created)
	}
	docID := created["document"].(map[string]any)["id"].(string)
	upload := func(n int) (int, map[string]any) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		w, _ := mw.CreateFormFile("file", "f.bin")
		w.Write(bytes.Repeat([]byte{1}, n))
		mw.Close()
		return post("/api/documentation/documents/"+docID+"/attachments", token, mw.FormDataContentType(), b.Bytes())
	}
	if status, body := upload(4 << 10); status != http.StatusCreated {
		t.Errorf("a file of 4 KiB under QUIRE_MAX_UPLOAD=4KiB and QUIRE_MAX_BODY=1KiB: %d %v", status, body)
	}
	if status, body := upload(4<<10 + 1); status != http.StatusRequestEntityTooLarge || !strings.Contains(fmt.Sprint(body["message"]), "4 KiB") {
		t.Errorf("one byte more: %d %v, want 413 naming the limit", status, body)
	}
}
