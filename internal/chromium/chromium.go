// Package chromium runs headless Chromium for the tests that check what a
// person sees: the HTML report opened in a real browser, its DOM as the
// browser built it, and a screenshot.
//
// .ci/run installs Debian's chromium when it is missing and sets
// BATON_CHROMIUM to it (or BATON_CHROMIUM_UNAVAILABLE to why it could not).
// Outside CI the binary is looked for on PATH. When no Chromium can be
// found a test skips and says so in its skip line, or fails under CI=true
// (see internal/testdep).
package chromium

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/testdep"
)

// names are the binaries looked for on PATH, in order.
var names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless_shell"}

// Find returns the Chromium binary: BATON_CHROMIUM, else the first of names
// on PATH.
func Find() (string, error) {
	if p := os.Getenv("BATON_CHROMIUM"); p != "" {
		if info, err := os.Stat(p); err != nil || info.IsDir() {
			return "", fmt.Errorf("BATON_CHROMIUM=%s is not a file", p)
		}
		return p, nil
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	why := os.Getenv("BATON_CHROMIUM_UNAVAILABLE")
	if why == "" {
		why = "no Chromium on PATH and BATON_CHROMIUM is not set (.ci/run installs Debian's chromium and sets it)"
	}
	return "", fmt.Errorf("%s", why)
}

// Require returns the binary or, when there is none, skips t loudly (fails
// it under CI=true). With BATON_CHROMIUM set a missing file fails the test.
func Require(t testing.TB) string {
	t.Helper()
	p, err := Find()
	if err != nil {
		if os.Getenv("BATON_CHROMIUM") != "" {
			t.Fatal(err)
		}
		testdep.Missing(t, "Chromium", err.Error())
	}
	return p
}

// flags are the ones a headless run on a CI machine needs: no sandbox (it
// may run as root), no GPU, and nothing that reaches the network on its own.
var flags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--no-first-run", "--disable-extensions", "--disable-sync",
	"--hide-scrollbars", "--mute-audio"}

// run starts bin on the file at page with extra flags and an empty
// user-data folder of its own, and returns its standard output.
func run(t testing.TB, bin, page string, extra ...string) []byte {
	t.Helper()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	profile := t.TempDir()
	args := append(append(append([]string{}, flags...), "--user-data-dir="+profile), extra...)
	args = append(args, "file://"+filepath.ToSlash(abs))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", extra, err, tail(stderr.Bytes(), 2000))
	}
	return stdout.Bytes()
}

// DumpDOM opens the HTML file at page and returns the DOM the browser built,
// serialised (chromium --dump-dom).
func DumpDOM(t testing.TB, bin, page string) string {
	t.Helper()
	out := run(t, bin, page, "--dump-dom", "--window-size=1280,800")
	if len(bytes.TrimSpace(out)) == 0 {
		t.Fatal("chromium --dump-dom printed nothing")
	}
	return string(out)
}

// Screenshot opens page at width×height and writes a PNG of it to png.
func Screenshot(t testing.TB, bin, page, png string, width, height int) {
	t.Helper()
	run(t, bin, page, fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+png)
	if info, err := os.Stat(png); err != nil || info.Size() == 0 {
		t.Fatalf("chromium wrote no screenshot at %s: %v", png, err)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
