//go:build !race

package docindex

const raced = false
