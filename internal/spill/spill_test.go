package spill_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/spill"
)

func TestWriteKeepsTheFullTextUnderAContentName(t *testing.T) {
	d := spill.New(filepath.Join(t.TempDir(), "run", "spill"))
	text := []byte(strings.Repeat("line of output\n", 5000) + "last line, no newline")
	f, err := d.Write("003-read_file", text)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(f.Path)
	if err != nil || !bytes.Equal(got, text) {
		t.Fatalf("spill file holds %d bytes (%v), want the %d written", len(got), err, len(text))
	}
	if f.Bytes != int64(len(text)) || f.Lines != 5001 {
		t.Errorf("File = %+v, want %d bytes and 5001 lines", f, len(text))
	}
	if !strings.HasPrefix(f.Name, "003-read_file-") || filepath.Dir(f.Path) != d.Path() {
		t.Errorf("name %q in %q", f.Name, filepath.Dir(f.Path))
	}
	again, err := d.Write("003-read_file", text)
	if err != nil || again != f {
		t.Errorf("the same text again: %+v, %v; want the same file %+v", again, err, f)
	}
	other, _ := d.Write("003-read_file", append(text, '!'))
	if other.Name == f.Name {
		t.Error("different text, same file name")
	}
	entries, _ := os.ReadDir(d.Path())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("a temporary file was left behind: %s", e.Name())
		}
	}
}

func TestLabelsCannotEscapeTheFolder(t *testing.T) {
	d := spill.New(t.TempDir())
	f, err := d.Write("../../etc/passwd", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(f.Path) != d.Path() || strings.Contains(f.Name, "/") {
		t.Errorf("label escaped: %s", f.Path)
	}
}

func TestStreamMatchesWrite(t *testing.T) {
	d := spill.New(t.TempDir())
	text := []byte(strings.Repeat("0123456789abcdef\n", 1<<14))
	s, err := d.Create("agent-output")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(text); i += 1000 {
		if _, err := s.Write(text[i:min(i+1000, len(text))]); err != nil {
			t.Fatal(err)
		}
	}
	f, err := s.Commit()
	if err != nil {
		t.Fatal(err)
	}
	w, _ := d.Write("agent-output", text)
	if f != w {
		t.Errorf("stream %+v, write %+v: the same content must be the same file", f, w)
	}
	got, _ := os.ReadFile(f.Path)
	if !bytes.Equal(got, text) {
		t.Error("the streamed file is not the text written")
	}

	a, _ := d.Create("gone")
	a.Write([]byte("half"))
	a.Abort()
	entries, _ := os.ReadDir(d.Path())
	if len(entries) != 1 {
		t.Errorf("after an abort the folder holds %d files, want 1", len(entries))
	}
}
