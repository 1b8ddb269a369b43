package inbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestScanOldestKeepsTheOldestAsksShapedAndCountsTheRest(t *testing.T) {
	dir := testDir(t)
	var oldest []string
	for i := range 7 {
		a := testAsk()
		// Posted newest first, so that keeping the first ones read would
		// keep the wrong ones.
		a.Created = time.Now().Add(-time.Duration(i) * time.Minute)
		p := post(t, dir, a)
		if i >= 4 {
			oldest = append([]string{p.ID()}, oldest...)
		}
	}
	shaped := 0
	asks, more, skipped, err := ScanOldest(dir, 3, func(a Ask) Ask {
		shaped++
		a.Arguments = "cut"
		return a
	})
	if err != nil || len(skipped) != 0 {
		t.Fatal(err, skipped)
	}
	if more != 4 || len(asks) != 3 {
		t.Fatalf("kept %d, more %d; want 3 and 4", len(asks), more)
	}
	for i, a := range asks {
		if a.ID != oldest[i] || a.Arguments != "cut" {
			t.Errorf("ask %d: %s %q, want %s shaped", i, a.ID, a.Arguments, oldest[i])
		}
	}
	if shaped > 7 {
		t.Errorf("shaped %d asks of 7", shaped)
	}
	if _, more, _, _ := ScanOldest(dir, 0, nil); more != 7 {
		t.Errorf("ScanOldest(0) counts %d more, want 7", more)
	}
}

func TestAnAskFileOverTheLimitIsRefusedWithoutReadingIt(t *testing.T) {
	dir := testDir(t)
	if _, err := List(dir); err != nil { // makes asks/
		t.Fatal(err)
	}
	name := newID() + ".json"
	f, err := os.Create(filepath.Join(dir, "asks", name))
	if err != nil {
		t.Fatal(err)
	}
	// A sparse gigabyte: reading it would take time and memory.
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, skipped, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || skipped[0].File != name || !strings.Contains(skipped[0].Why, "1073741824 bytes") || !strings.Contains(skipped[0].Why, "not read") {
		t.Errorf("skipped %v, want the file refused unread with its size", skipped)
	}
}
