package docindex

import "syscall"

// mapBytes maps n bytes of anonymous private memory, zeroed, outside the
// collected heap; pages count in the RSS only once written.
func mapBytes(n int) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	return b, err == nil
}

func unmapBytes(b []byte) { _ = syscall.Munmap(b) }

// dropPages gives whole pages back to the system (they read as zeros
// afterwards).
func dropPages(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }
