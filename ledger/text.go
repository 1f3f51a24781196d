package ledger

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/baton-dev/baton/internal/textclip"
)

// ErrUnsafeText: a field's text would change the structure of the ledger
// around it (a heading that ends the entry, a code fence that hides what
// follows it), so the entry is refused rather than written.
var ErrUnsafeText = errors.New("ledger text that would change the file's structure")

// structural matches a line that, wherever it sits in a field, markdown
// reads as structure: an ATX heading (any level ends a field or the entry,
// and "## Ledger —" starts a new one), a code fence (an unclosed one hides
// every later entry from a reader), or a setext underline (which turns the
// line above into a heading for other markdown readers). Leading spaces
// are ignored since Render may indent a line into its bullet.
var structural = regexp.MustCompile("^[ \t]*(?:#{1,6}(?:[ \t]|$)|`{3,}|~{3,}|(?:=+|-{2,})[ \t]*$)")

// CheckText refuses an entry whose text would not stay inside its fields:
// a line that is a heading, a code fence or a setext underline, a carriage
// return (a line break to other readers of the file) or another control
// character but tab and newline. The phase, which goes into the heading,
// must be one line. The error names the field and the line and wraps
// ErrUnsafeText. The choice is to refuse, not to rewrite: a ledger entry
// is evidence, and text baton changed silently would not be.
func (e Entry) CheckText() error {
	check := func(field, s string) error {
		for i, ln := range strings.Split(s, "\n") {
			if j := strings.IndexFunc(ln, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }); j >= 0 {
				return fmt.Errorf("%s, line %d: a control character (%q): %w", field, i+1, ln[j], ErrUnsafeText)
			}
			if i > 0 && structural.MatchString(ln) {
				return fmt.Errorf("%s, line %d: %q starts a heading, a code fence or an underline: %w", field, i+1, textclip.Runes(strings.TrimSpace(ln), 40), ErrUnsafeText)
			}
		}
		return nil
	}
	if strings.ContainsAny(e.Phase, "\r\n") {
		return fmt.Errorf("phase: more than one line: %w", ErrUnsafeText)
	}
	fields := []struct {
		name  string
		items []string
	}{
		{"phase", []string{e.Phase}},
		{FieldFrozenDecisions, e.FrozenDecisions},
		{FieldArtifacts, e.Artifacts},
		{FieldCurrentPhase, []string{e.CurrentPhase}},
		{FieldNextStep, []string{e.NextStep}},
		{FieldOpenTickets, e.OpenTickets},
	}
	for _, it := range e.DoneSoFar {
		fields = append(fields, struct {
			name  string
			items []string
		}{FieldDoneSoFar, []string{it.Text, it.Evidence}})
	}
	for _, f := range fields {
		for _, s := range f.items {
			// The first line of a value follows "- " or stands alone
			// after the field's heading; it is checked as a later line.
			if err := check(f.name, "\n"+strings.TrimSpace(s)); err != nil {
				return err
			}
		}
	}
	return nil
}
