//go:build !linux

package pgtest

import "syscall"

// procAttr cannot switch users or set a parent death signal portably: a
// root test process elsewhere than Linux fails at initdb with its message.
func procAttr(as *runAs) *syscall.SysProcAttr { return nil }
