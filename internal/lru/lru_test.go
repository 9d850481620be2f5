package lru_test

import (
	"testing"

	"quire/internal/lru"
)

func TestLeastRecentlyUsedGoFirst(t *testing.T) {
	c := lru.New[string, int](30, 20)
	c.Put("a", 1, 10)
	c.Put("b", 2, 10)
	c.Put("c", 3, 10)
	if _, ok := c.Get("a"); !ok { // a is now the most recent
		t.Fatal("a is gone within the bound")
	}
	c.Put("d", 4, 10) // over 30: b, the least recent, goes
	if _, ok := c.Get("b"); ok {
		t.Error("b stayed past the bound")
	}
	for k, want := range map[string]int{"a": 1, "c": 3, "d": 4} {
		if v, ok := c.Get(k); !ok || v != want {
			t.Errorf("Get(%q) = %d, %v; want %d", k, v, ok, want)
		}
	}
	if c.Len() != 3 || c.Bytes() != 30 {
		t.Errorf("Len, Bytes = %d, %d; want 3, 30", c.Len(), c.Bytes())
	}
}

func TestAValueOverTheEntryBoundIsNotKept(t *testing.T) {
	c := lru.New[string, int](100, 20)
	c.Put("small", 1, 20)
	c.Put("big", 2, 21)
	if _, ok := c.Get("big"); ok {
		t.Error("a value over the entry bound was kept")
	}
	if _, ok := c.Get("small"); !ok {
		t.Error("a value over the entry bound pushed another out")
	}
}

func TestAKeyHasOneValue(t *testing.T) {
	c := lru.New[string, int](100, 100)
	c.Put("k", 1, 10)
	c.Put("k", 2, 30)
	if v, _ := c.Get("k"); v != 2 || c.Bytes() != 30 || c.Len() != 1 {
		t.Errorf("Get = %d, Bytes = %d, Len = %d; want 2, 30, 1", v, c.Bytes(), c.Len())
	}
	c.Put("k", 3, 101) // over the entry bound: k keeps none
	if _, ok := c.Get("k"); ok || c.Bytes() != 0 {
		t.Errorf("a value over the bound left k with one (Bytes %d)", c.Bytes())
	}
}
