//go:build race

package docindex

// raced: the race detector is on (its memory and time are not the figures).
const raced = true
