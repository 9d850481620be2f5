//go:build !linux

package docindex

// Elsewhere the base is a plain slice (on the collected heap).
func mapBytes(int) ([]byte, bool) { return nil, false }
func unmapBytes([]byte)           {}
func dropPages([]byte)            {}
