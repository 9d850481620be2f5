package webhook_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"quire"
	"quire/webhook"
)

// A receiver that answers 200 with megabytes of header lines has its
// answer cut at 64 KiB, headers included, like its body: the attempt
// fails rather than the worker reading and keeping all of it.
func TestAnswerHeadersAreCapped(t *testing.T) {
	db := openDB(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				bufio.NewReader(c).Read(make([]byte, 64<<10)) // the request, loosely
				bw := bufio.NewWriterSize(c, 1<<20)
				bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n")
				line := "X-Pad: " + strings.Repeat("a", 4000) + "\r\n"
				for n := 0; n < 8<<20; n += len(line) {
					if _, err := bw.WriteString(line); err != nil {
						return
					}
				}
				bw.WriteString("\r\n")
				bw.Flush()
			}(c)
		}
	}()
	h := addHook(t, db, "http://"+ln.Addr().String()+"/hook", "*")
	startWorker(t, &webhook.Worker{Store: db, AllowPrivate: true})
	change(t, db, time.Now(), quire.ActionDocumentUpdated, "doc")
	var log []quire.WebhookDelivery
	waitFor(t, "the attempt recorded", func() bool {
		log, _ = db.Deliveries(t.Context(), h.ID, "", 1)
		return len(log) == 1 && (log[0].LastStatus != 0 || log[0].LastError != "")
	})
	if log[0].State == quire.DeliveryDelivered || log[0].LastStatus == 200 {
		t.Errorf("an answer with 8 MiB of headers was read whole: %+v", log[0])
	}
}
