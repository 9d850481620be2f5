package mailtest

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime/quotedprintable"
	"strings"
)

// decode undoes a Content-Transfer-Encoding. (The base64 decoder skips the
// line breaks of the body itself.)
func decode(encoding string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "7bit", "8bit", "binary":
		return r, nil
	case "quoted-printable":
		return quotedprintable.NewReader(r), nil
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, r), nil
	}
	return nil, fmt.Errorf("unknown transfer encoding %q", encoding)
}
