package mail

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"quire"
)

// dirSender is the sender without a mail server: each mail becomes
// dir/ID.eml (a complete message any mail program opens) and one log line
// carrying its text, link included: the only log line that may, so that a
// local user can follow the link.
type dirSender struct {
	dir    string
	from   string
	logger *slog.Logger
}

func (s *dirSender) Send(ctx context.Context, m quire.Mail) error {
	msg, err := message(s.from, m)
	if err != nil {
		return err
	}
	// The files carry live links: readable by the service's user only.
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("local outbox: %w", err)
	}
	f, err := os.CreateTemp(s.dir, ".mail-*")
	if err != nil {
		return fmt.Errorf("local outbox: %w", err)
	}
	tmp := f.Name()
	_, err = msg.WriteTo(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	// Named after the mail, so that a mail delivered twice (after a crash)
	// replaces its own file rather than adding a second one.
	path := filepath.Join(s.dir, m.ID+".eml")
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("local outbox: %w", err)
	}
	s.logger.Info("mail written to the local outbox (no --smtp-url)",
		"to", m.To, "subject", m.Subject, "file", path, "text", m.Text)
	return nil
}
