package attachments

import "io"

// SpoolIn is Spool into the directory dir instead of Config.TempDir: an
// import spools the files of an archive into a folder of its own, removed
// whole when the import ends.
func (s *Service) SpoolIn(dir string, r io.Reader, name string) (*Upload, error) {
	c := *s
	c.cfg.TempDir = dir
	return c.Spool(r, name)
}
