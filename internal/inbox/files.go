package inbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// writeAtomic writes b to path through a temporary file in the same
// directory and a rename, so a reader sees the whole file or none.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err = f.Write(b); err == nil {
		err = f.Chmod(0o600)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// writeExclusive writes b to path only if path does not exist yet, whole:
// the bytes go to a temporary file that is then hard-linked into place.
// link(2) fails when the name exists, so of concurrent writers exactly one
// wins, and no reader ever sees a half-written file (O_EXCL alone would
// show an empty one between create and write).
func writeExclusive(path string, b []byte) (won bool, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err = f.Write(b); err == nil {
		err = f.Chmod(0o600)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// readBounded reads a regular file (never through a symlink) of at most
// maxFile bytes.
func readBounded(path string) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		if errors.Is(err, errSymlink) {
			return nil, fmt.Errorf("%s is a symlink", filepath.Base(path))
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	if fi.Size() > maxFile {
		// Refused before any of it is read: every reader (each live page
		// stream) would otherwise hold it in memory.
		return nil, fmt.Errorf("%s is %d bytes, more than the %d a file here may hold, so it is not read (toolwarden never writes one this large: remove it)", filepath.Base(path), fi.Size(), maxFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(path), maxFile)
	}
	return b, nil
}

// decodeStrict decodes one JSON value with no unknown fields and nothing after it.
func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func askPath(dir, id string) string    { return filepath.Join(dir, asksDir, id+".json") }
func answerPath(dir, id string) string { return filepath.Join(dir, answersDir, id+".json") }

// readAsk reads and checks the ask file for id.
func readAsk(dir, id string) (Ask, error) {
	b, err := readBounded(askPath(dir, id))
	if err != nil {
		return Ask{}, err
	}
	var a Ask
	if err := decodeStrict(b, &a); err != nil {
		return Ask{}, fmt.Errorf("%s.json: %w", id, err)
	}
	if a.ID != id {
		return Ask{}, fmt.Errorf("%s.json holds ask %q", id, a.ID)
	}
	if err := a.validate(); err != nil {
		return Ask{}, fmt.Errorf("%s.json: %w", id, err)
	}
	return a, nil
}

// readAnswer reads and checks the answer file for id.
func readAnswer(dir, id string) (Answer, error) {
	b, err := readBounded(answerPath(dir, id))
	if err != nil {
		return Answer{}, err
	}
	var ans Answer
	if err := decodeStrict(b, &ans); err != nil {
		return Answer{}, fmt.Errorf("answer %s.json: %w", id, err)
	}
	if ans.AskID != id {
		return Answer{}, fmt.Errorf("answer %s.json answers ask %q", id, ans.AskID)
	}
	return ans, nil
}

// pidAlive reports whether a process with this pid exists (files_unix.go).
func pidAlive(pid int) bool { return pid > 0 && processExists(pid) }
