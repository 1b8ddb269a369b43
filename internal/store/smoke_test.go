package store

import (
	"context"
	"path/filepath"
	"testing"
)

func TestSmoke(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d", "s.db")
	for i := 0; i < 2; i++ {
		s, err := Open(context.Background(), "sqlite:"+p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.schemaVersion(context.Background(), s.db)
		if err != nil || v != 1 {
			t.Fatal(v, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
