package warm

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAnEventAndAnAnswerRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := WriteEvent(&b, []byte(`{"tool_name":"x"}`)); err != nil {
		t.Fatal(err)
	}
	ev, err := ReadEvent(&b)
	if err != nil || string(ev) != `{"tool_name":"x"}` {
		t.Fatalf("%q %v", ev, err)
	}
	want := Answer{Exit: 2, PID: 4242, Stdout: []byte("out"), Stderr: []byte("err\n")}
	b.Reset()
	if err := WriteAnswer(&b, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAnswer(&b)
	if err != nil || got.Exit != 2 || got.PID != 4242 || string(got.Stdout) != "out" || string(got.Stderr) != "err\n" {
		t.Fatalf("%+v %v", got, err)
	}
}

// Anything but one whole frame is refused, and a length past the limit is
// refused before it is read.
func TestMalformedFramesAreRefused(t *testing.T) {
	huge := binary.LittleEndian.AppendUint32([]byte(magic), MaxEvent+2)
	for name, frame := range map[string][]byte{
		"empty":                nil,
		"another protocol":     []byte("GET / HTTP/1.1\r\n\r\n"),
		"a length past it":     huge,
		"shorter than it says": append(binary.LittleEndian.AppendUint32([]byte(magic), 5), "ab"...),
		"no length":            []byte(magic),
	} {
		if _, err := ReadEvent(bytes.NewReader(frame)); err == nil {
			t.Errorf("%s: event accepted", name)
		}
		if _, err := ReadAnswer(bytes.NewReader(frame)); err == nil {
			t.Errorf("%s: answer accepted", name)
		}
	}
}

// Every input the key covers changes it; the same inputs give the same key.
func TestTheKeyNamesOneInvocation(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "toolwarden")
	if err := os.WriteFile(exe, []byte("v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	key := func(args ...string) string {
		t.Helper()
		k, err := Key(exe, args)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key("--warm", "--config", "a.toml")
	if again := key("--warm", "--config", "a.toml"); again != base {
		t.Fatal("the same invocation named two ways")
	}
	if key("--warm", "--config", "b.toml") == base || key("--warm", "--config", "a.toml", "") == base || key("--warm", "--config a.toml") == base {
		t.Fatal("other arguments, same key")
	}
	t.Setenv("TOOLWARDEN_KEY_TEST", "1")
	withEnv := key("--warm", "--config", "a.toml")
	if withEnv == base {
		t.Fatal("another environment, same key")
	}
	if err := os.WriteFile(exe, []byte("v22"), 0o755); err != nil {
		t.Fatal(err)
	}
	withExe := key("--warm", "--config", "a.toml")
	if withExe == withEnv {
		t.Fatal("another executable, same key")
	}
	t.Chdir(t.TempDir())
	withDir := key("--warm", "--config", "a.toml")
	if withDir == withExe {
		t.Fatal("another directory, same key")
	}
}

func TestASocketPathTooLongIsRefused(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PlaceFor("/"+strings.Repeat("d", 80), exe, nil); err == nil || !strings.Contains(err.Error(), RuntimeDirEnv) {
		t.Fatalf("%v", err)
	}
	p, err := PlaceFor("/run/tw", exe, nil)
	if err != nil || !strings.HasPrefix(p.Sock, "/run/tw/hook-") || !strings.HasSuffix(p.Lock, ".lock") {
		t.Fatalf("%+v %v", p, err)
	}
}

// Whatever arrives on the socket, reading it never panics, never reads a
// frame past its limit, and a frame that reads back is the one written.
func FuzzFrames(f *testing.F) {
	var ev, ans bytes.Buffer
	WriteEvent(&ev, []byte(`{"tool_name":"x"}`))
	WriteAnswer(&ans, Answer{Exit: 2, PID: 7, Stdout: []byte("o"), Stderr: []byte("e")})
	f.Add(ev.Bytes())
	f.Add(ans.Bytes())
	f.Add([]byte(magic + "\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if e, err := ReadEvent(bytes.NewReader(data)); err == nil {
			var again bytes.Buffer
			WriteEvent(&again, e)
			if !bytes.HasPrefix(data, again.Bytes()) {
				t.Fatalf("event %q does not read back from %q", e, data)
			}
		}
		if a, err := ReadAnswer(bytes.NewReader(data)); err == nil {
			var again bytes.Buffer
			WriteAnswer(&again, a)
			if !bytes.HasPrefix(data, again.Bytes()) {
				t.Fatalf("answer %+v does not read back from %q", a, data)
			}
		}
	})
}
