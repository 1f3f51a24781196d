package runlog

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

const killHelperEnv = "RUNLOG_KILL_HELPER_PATH"

// TestKillHelper is not a test of its own: TestSurvivesSIGKILL runs the test
// binary with it as a child process that writes events until it is killed.
func TestKillHelper(t *testing.T) {
	path := os.Getenv(killHelperEnv)
	if path == "" {
		t.Skip("helper process for TestSurvivesSIGKILL")
	}
	w, err := Open(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for i := 1; ; i++ {
		if err := w.Write(Event{Run: "r", Type: ModelCall, Step: strconv.Itoa(i), InputHash: "sha256:0123456789abcdef"}); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		// Report only what Write has returned for: those events must
		// survive the kill.
		fmt.Println(i)
	}
}

// A writer killed with SIGKILL loses at most the event it was writing; every
// event whose Write returned is in the log, and the log still reads.
func TestSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$")
	cmd.Env = append(os.Environ(), killHelperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	acked := 0
	deadline := time.Now().Add(10 * time.Second)
	for acked < 50 && sc.Scan() {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("helper said %q", sc.Text())
		}
		acked = n
		if time.Now().After(deadline) {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if acked == 0 {
		t.Fatal("helper wrote nothing before the kill")
	}
	evs, problems, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < acked {
		t.Fatalf("%d events in the log, but %d writes had returned", len(evs), acked)
	}
	if len(problems) > 1 || len(problems) == 1 && !problems[0].Torn {
		t.Fatalf("problems after a kill: %v", problems)
	}
	for i, e := range evs {
		if e.Step != strconv.Itoa(i+1) {
			t.Fatalf("event %d is step %q: events lost or reordered", i+1, e.Step)
		}
	}
}
