package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/orchestrate"
)

// askOutput is what baton ask shows as a run goes and when it ends:
// stdout per --output, progress and warnings on stderr.
type askOutput struct {
	mode        string
	out, stderr io.Writer
	sj          *streamJSON   // --output stream-json
	prog        *progress     // the live block on a terminal
	answer      *answerStream // --stream in text mode
}

// events maps the run's events onto the output. It sets the flags' retry
// notice, which the call policy built from them sends on.
func (o *askOutput) events(f *askFlags) baton.Events {
	if o.mode == outputStreamJSON {
		o.sj = newStreamJSON(o.out, nil)
	}
	// On a terminal, retry notices go through the live progress block
	// (set at the start, before any call is made) instead of being drawn
	// over. In stream-json they are events, and the live block is not
	// drawn.
	live := isTerminal(o.stderr) && o.sj == nil
	ev := baton.Events{Warning: func(msg string) { fmt.Fprintf(o.stderr, "baton: warning: %s\n", msg) }}
	switch {
	case o.sj != nil:
		f.models.onRetry = o.sj.retry
		ev.Progress = o.sj.event
		ev.Call = o.sj.call
	case live:
		f.models.onRetry = func(attempt int, wait time.Duration, err error) {
			if o.prog != nil {
				o.prog.retry(attempt, wait, err)
			}
		}
		ev.Progress = func(e orchestrate.Event) {
			if o.prog != nil {
				o.prog.event(e)
			}
		}
	}
	switch {
	case f.stream && o.sj != nil:
		ev.Text, ev.Restart = o.sj.text, o.sj.restart
	case f.stream && o.mode == outputText && !f.dryRun:
		// The live block stops before the first piece of the answer:
		// it redraws by moving the cursor up, over whatever is below.
		o.answer = &answerStream{w: o.out, stderr: o.stderr, before: func() {
			if o.prog != nil {
				o.prog.close()
			}
		}}
		ev.Text, ev.Restart = o.answer.text, o.answer.restart
		f.models.onRetry = o.answer.retryNotice(f.models.onRetry)
	}
	ev.Start = func(s baton.Start) {
		if s.NoProvider != nil {
			// Said once, here, with what to set; stdout then only says
			// that no model was called.
			fmt.Fprintf(o.stderr, "baton: %v; running as a dry run\n", s.NoProvider)
		}
		if live && !s.DryRun {
			fd := int(o.stderr.(*os.File).Fd())
			o.prog = newLiveProgress(o.stderr, func() int { w, _, _ := term.GetSize(fd); return w })
		}
	}
	return ev
}

// finish prints the run's result and returns the command's exit.
func (o *askOutput) finish(res *baton.Result, runErr error) error {
	rec, stderr := res.Record, o.stderr
	failed := runErr != nil && !errors.Is(runErr, orchestrate.ErrPartial) && !errors.Is(runErr, context.Canceled)
	if failed {
		// The cause comes first, before the summary's zeros, with what
		// to check when it is the user's setting.
		fmt.Fprintf(stderr, "baton: %s\n", oneLineErr(runErr))
		if hint := providerHint(runErr, rec.Provider); hint != "" {
			fmt.Fprintf(stderr, "baton: %s\n", hint)
		}
	}
	if res.SaveErr != nil {
		fmt.Fprintf(stderr, "baton: %v\n", res.SaveErr)
	}
	if err := o.print(rec, runErr); err != nil {
		return err
	}
	if !rec.DryRun {
		printSummary(stderr, rec)
	}
	if res.Path != "" {
		fmt.Fprintf(stderr, "baton: run record: %s\n", res.Path)
	}
	for _, w := range rec.Warnings {
		fmt.Fprintf(stderr, "baton: warning: %s\n", w)
	}
	switch {
	case runErr == nil:
		return nil
	case errors.Is(runErr, orchestrate.ErrPartial):
		fmt.Fprintf(stderr, "baton: partial answer: %v\n", runErr)
		return &exitErr{code: exitPartial}
	case errors.Is(runErr, context.Canceled):
		return withCode(exitError, errors.New("cancelled; the run record keeps what finished"))
	default:
		return &exitErr{code: exitError} // printed first, above
	}
}

// print writes stdout: the record, the dry run's plan or the answer.
func (o *askOutput) print(rec *orchestrate.Record, runErr error) error {
	switch {
	case o.sj != nil:
		o.sj.finish(rec)
	case o.mode == outputJSON:
		enc := json.NewEncoder(o.out)
		enc.SetIndent("", "  ")
		return enc.Encode(rec)
	case rec.DryRun && !errors.Is(runErr, context.Canceled):
		// A dry run stopped before its plan has nothing to show.
		printDryRun(o.out, rec)
	case o.answer != nil && o.answer.finish():
		// Printed as it arrived; not again.
		if rec.Answer == "" {
			fmt.Fprintln(o.stderr, "baton: the answer above is incomplete: the synthesis failed")
		}
	default:
		if rec.Answer != "" {
			fmt.Fprintln(o.out, strings.TrimRight(rec.Answer, "\n"))
		}
	}
	return nil
}
